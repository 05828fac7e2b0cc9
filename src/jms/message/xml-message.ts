import type { BodyType, Message } from './message.js';
import { TextMessage } from './text-message.js';

/**
 * A message whose body is an XML document as text (WebLogic's XMLMessage, MSG-4). XPath
 * selectors (`JMS_BEA_SELECT`, `XPATH`) read this body; it is parsed at most once per message.
 */
export class XMLMessage extends TextMessage {
  override get bodyType(): BodyType {
    return 'xml';
  }

  protected override createEmpty(): Message {
    return new XMLMessage();
  }
}
