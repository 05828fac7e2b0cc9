/**
 * The parsed XML body of a message, kept in `message.parsedBodyCache` so a body is parsed at most
 * once per message however many selectors test it (SEL-4). The compact tree is always built
 * first (it decides well-formedness and refuses DTDs); the xmldom document is built from the same
 * text only when an XPath expression outside the fast path needs it, and then kept too.
 */
import { DOMParser, type Document } from '@xmldom/xmldom';
import type { Message } from '../../message/message.js';
import { TextMessage } from '../../message/text-message.js';
import { parseXml, type XmlDocument } from './xml-document.js';

/** One message body, parsed. */
export class ParsedBody {
  /** The text this was parsed from, to notice a body replaced without the cache being reset. */
  readonly source: string;
  /** The compact tree, or null when the body is not well-formed XML (or declares a DTD). */
  readonly document: XmlDocument | null;
  #dom: Document | null | undefined = undefined;

  constructor(source: string) {
    this.source = source;
    this.document = parseXml(source);
  }

  /** The xmldom document, parsed on first use; null when the body is not well-formed. */
  dom(): Document | null {
    if (this.#dom === undefined) this.#dom = this.document === null ? null : parseDom(this.source);
    return this.#dom;
  }
}

/** The parsed body of a message whose body is text (TextMessage, XMLMessage); null for other bodies. */
export function parsedBodyOf(message: Message): ParsedBody | null {
  if (!(message instanceof TextMessage)) return null;
  const text = message.getText();
  if (text === null) return null;
  const cached = message.parsedBodyCache;
  if (cached instanceof ParsedBody && cached.source === text) return cached;
  const parsed = new ParsedBody(text);
  message.parsedBodyCache = parsed;
  return parsed;
}

function parseDom(source: string): Document | null {
  let failed = false;
  // xmldom reports problems through onError (and would print them otherwise); any report means
  // the body is not one we trust, so it is treated as malformed rather than half-parsed.
  const parser = new DOMParser({
    onError: () => {
      failed = true;
    },
  });
  try {
    const dom = parser.parseFromString(source, 'text/xml');
    return failed ? null : dom;
  } catch {
    return null;
  }
}
