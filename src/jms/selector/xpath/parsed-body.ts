/**
 * The parsed XML body of a message, kept in `message.parsedBodyCache` so a body is parsed at most
 * once per message however many selectors test it (SEL-4). The compact tree is always built
 * first (it decides well-formedness and refuses DTDs); the DOM xpath.js walks is built only when
 * an XPath expression outside the fast paths needs it, and then kept too: from the tape
 * (tape-dom.ts) for a body without namespaces, by xmldom from the same text for one with them
 * (namespace scoping is xmldom's job).
 */
import { DOMParser, type Document, type Node } from '@xmldom/xmldom';
import type { Message } from '../../message/message.js';
import { TextMessage } from '../../message/text-message.js';
import { buildTapeDom } from './tape-dom.js';
import { readXml, type XmlDocument, type XmlRefusal } from './xml-document.js';
import { reportXPathLimit } from './xpath-limits.js';

/** One message body, parsed. */
export class ParsedBody {
  /** The text this was parsed from, to notice a body replaced without the cache being reset. */
  readonly source: string;
  /** The compact tree, or null when the body is not well-formed XML, declares a DTD or is over a limit. */
  readonly document: XmlDocument | null;
  /** Why {@link document} is null: `malformed`, or the limit the body is over; null when it parsed. */
  readonly refusal: XmlRefusal | null;
  /**
   * What each expression evaluated through xpath.js answered on this body, by the expression's
   * compiled form: the answer depends on nothing else, and a queue may test the same message
   * against the same consumer's selector many times, so an expensive (or over-budget) expression
   * costs its work once per message.
   */
  readonly answers = new Map<object, string | boolean | null>();
  #dom: object | null | undefined = undefined;

  constructor(source: string) {
    this.source = source;
    const result = readXml(source);
    this.document = typeof result === 'string' ? null : result;
    this.refusal = typeof result === 'string' ? result : null;
    // Once per body, however many selectors test it, as the parse itself.
    if (this.refusal !== null && this.refusal !== 'malformed') reportXPathLimit(this.refusal);
  }

  /** The document node for xpath.js, built on first use; null when the body is not well-formed. */
  dom(): object | null {
    if (this.#dom === undefined) {
      const document = this.document;
      if (document === null) this.#dom = null;
      else this.#dom = document.namespaced ? parseDom(this.source) : buildTapeDom(document);
    }
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
    if (failed) return null;
    numberInDocumentOrder(dom);
    return dom;
  } catch {
    return null;
  }
}

/** A node's position in document order, set by {@link numberInDocumentOrder}. */
const ORDER = Symbol('document order');
type Numbered = Node & { [ORDER]?: number; compareDocumentPosition(other: unknown): number };
const DOCUMENT_POSITION_PRECEDING = 2;
const DOCUMENT_POSITION_FOLLOWING = 4;

/**
 * xpath.js keeps every node-set in document order by comparing nodes with
 * `compareDocumentPosition`, which xmldom answers by walking parent chains and the common
 * parent's children: on a wide body each comparison costs the number of siblings, and a path
 * over 200 siblings spent most of a second there. One walk numbers every node (attributes after
 * their element, before its children, as XPath orders them) and gives each node a comparison of
 * those numbers, so a comparison is O(1) and the work of an evaluation follows the nodes it visits,
 * which the step budget bounds. Only this document, never shared, is changed.
 */
function numberInDocumentOrder(dom: Document): void {
  let next = 0;
  const pending: Node[] = [dom];
  while (pending.length > 0) {
    const node = pending.pop()! as Numbered;
    node[ORDER] = next++;
    node.compareDocumentPosition = compareByOrder;
    const attributes = (node as { attributes?: ArrayLike<Node> }).attributes;
    if (attributes !== undefined) {
      for (let i = 0; i < attributes.length; i++) {
        const attribute = attributes[i] as Numbered;
        attribute[ORDER] = next++;
        attribute.compareDocumentPosition = compareByOrder;
      }
    }
    for (let child = node.lastChild; child !== null; child = child.previousSibling) pending.push(child);
  }
}

/** xmldom's own comparison, from its node prototype (declared as a function property: it is called with `this` below). */
const xmldomCompare = (
  Object.getPrototypeOf(new DOMParser().parseFromString('<a/>', 'text/xml')) as {
    readonly compareDocumentPosition: (this: Node, other: unknown) => number;
  }
).compareDocumentPosition;

function compareByOrder(this: Numbered, other: unknown): number {
  const mine = this[ORDER];
  const theirs = (other as Numbered | null)?.[ORDER];
  // Nodes xpath.js makes itself (namespace nodes) have no number: xmldom's own answer.
  if (mine === undefined || theirs === undefined) return xmldomCompare.call(this, other);
  if (mine === theirs) return 0;
  return theirs < mine ? DOCUMENT_POSITION_PRECEDING : DOCUMENT_POSITION_FOLLOWING;
}
