/**
 * A read-only DOM over the element tape of xml-document.ts, for the XPath expressions the fast
 * paths do not answer. xpath.js walks a DOM; xmldom, which built it before, parses the body a
 * second time (with a new RegExp for every end tag) into far more objects than xpath.js looks at.
 * This offers only what xpath.js reads: the node kinds of the XPath data model (document, element,
 * attribute, text, comment, processing instruction), their links (`parentNode`, `firstChild`,
 * `lastChild`, `nextSibling`, `previousSibling`, `ownerDocument`, `ownerElement`), names and
 * values, `attributes` with `item()`, `getAttribute`/`getAttributeNS`, `getElementById`, and an
 * O(1) `compareDocumentPosition`.
 *
 * Nodes are made when xpath.js first reaches them: an element's children when its first or last
 * child is asked for, its attributes when they are, a text node's value when it is read. So
 * `count(/order/item)` makes the root's and the order's children and nothing below them.
 *
 * Document order is the offset in the body where a node starts (an attribute: between its
 * element's `<` and the element's first child), known without walking anything.
 *
 * Only bodies without namespaces are read this way, so every name is unprefixed and in no
 * namespace; a namespaced body goes to xmldom. Text follows the XPath data model like the fast
 * path: adjacent text and CDATA are one text node, and white space between elements is text.
 */
import { RECORD, attributeList, normalizeNewlines, regionValue, type XmlDocument } from './xml-document.js';

const ELEMENT_NODE = 1;
const ATTRIBUTE_NODE = 2;
const TEXT_NODE = 3;
const PROCESSING_INSTRUCTION_NODE = 7;
const COMMENT_NODE = 8;
const DOCUMENT_NODE = 9;
const DOCUMENT_POSITION_PRECEDING = 2;
const DOCUMENT_POSITION_FOLLOWING = 4;

/** A node of the tree: the links and order every kind has. */
abstract class TapeNode {
  abstract readonly nodeType: number;
  abstract readonly nodeName: string;
  parentNode: TapeNode | null = null;
  nextSibling: TapeNode | null = null;
  previousSibling: TapeNode | null = null;

  constructor(
    readonly ownerDocument: TapeDocument | null,
    /** The position in document order (see the module comment). */
    readonly order: number,
  ) {}

  get prefix(): null {
    return null;
  }

  get namespaceURI(): null {
    return null;
  }

  get nodeValue(): string | null {
    return null;
  }

  get firstChild(): TapeNode | null {
    return null;
  }

  get lastChild(): TapeNode | null {
    return null;
  }

  compareDocumentPosition(other: unknown): number {
    const theirs = orderOf(other);
    if (theirs === this.order) return 0;
    return theirs < this.order ? DOCUMENT_POSITION_PRECEDING : DOCUMENT_POSITION_FOLLOWING;
  }
}

/**
 * The order of a node xpath.js compares: one of ours, or a namespace node it made itself for the
 * `namespace::` axis, which comes right after its element, before the attributes.
 */
function orderOf(node: unknown): number {
  if (node instanceof TapeNode) return node.order;
  const owner = (node as { ownerElement?: unknown } | null)?.ownerElement;
  return owner instanceof TapeNode ? owner.order + 1e-6 : -Infinity;
}

/** A node with children (the document, an element), made on first use. */
abstract class TapeParent extends TapeNode {
  #first: TapeNode | null | undefined = undefined;
  #last: TapeNode | null = null;

  override get firstChild(): TapeNode | null {
    if (this.#first === undefined) this.#makeChildren();
    return this.#first!;
  }

  override get lastChild(): TapeNode | null {
    if (this.#first === undefined) this.#makeChildren();
    return this.#last;
  }

  /** Appends this node's children, in document order, with {@link append}. */
  protected abstract makeChildren(): void;

  protected append(child: TapeNode): void {
    child.parentNode = this;
    child.previousSibling = this.#last;
    if (this.#last === null) this.#first = child;
    else this.#last.nextSibling = child;
    this.#last = child;
  }

  #makeChildren(): void {
    this.#first = null;
    this.makeChildren();
  }

  /**
   * Appends the nodes of `from`..`to`, a stretch of the body with no element in it: text (when
   * `withText`; CDATA belongs to the text around it), comments and processing instructions.
   */
  protected appendContent(source: XmlDocument, from: number, to: number, withText: boolean): void {
    const document = this.ownerDocument ?? (this as unknown as TapeDocument);
    const text = source.text;
    let textStart = -1;
    let i = from;
    while (i < to) {
      const lt = text.indexOf('<', i);
      const stop = lt < 0 || lt > to ? to : lt;
      if (stop > i && textStart < 0) textStart = i;
      if (stop === to) break;
      if (text.startsWith('<![CDATA[', lt)) {
        if (textStart < 0) textStart = lt;
        i = text.indexOf(']]>', lt + 9) + 3;
        continue;
      }
      if (textStart >= 0 && withText) this.#appendText(document, source, textStart, lt);
      textStart = -1;
      if (text.startsWith('<!--', lt)) {
        const end = text.indexOf('-->', lt + 4);
        this.append(new TapeComment(document, lt, normalizeNewlines(text.slice(lt + 4, end))));
        i = end + 3;
      } else {
        const end = text.indexOf('?>', lt + 2);
        this.append(processingInstruction(document, lt, normalizeNewlines(text.slice(lt + 2, end))));
        i = end + 2;
      }
    }
    if (textStart >= 0 && withText) this.#appendText(document, source, textStart, to);
  }

  /** A text node for `from`..`to`, unless it is only empty CDATA (XPath has no empty text nodes). */
  #appendText(document: TapeDocument, source: XmlDocument, from: number, to: number): void {
    const node = new TapeText(document, source, from, to);
    // Only a stretch that starts with CDATA can be empty.
    if (source.text.charCodeAt(from) !== 0x3c || node.nodeValue !== '') this.append(node);
  }
}

class TapeDocument extends TapeParent {
  readonly nodeType = DOCUMENT_NODE;
  readonly nodeName = '#document';
  readonly documentElement: TapeElement;
  readonly #source: XmlDocument;

  constructor(source: XmlDocument) {
    super(null, -Infinity);
    this.#source = source;
    this.documentElement = new TapeElement(this, source, 0);
  }

  protected makeChildren(): void {
    const { text, tape } = this.#source;
    // Comments and processing instructions around the root element are the document's children.
    this.appendContent(this.#source, prologStart(text), tape[0]! - 1, false);
    this.append(this.documentElement);
    this.appendContent(this.#source, tape[4]!, text.length, false);
  }

  /** The first element in document order whose `id` attribute is `id` (XPath's id() without a DTD, as xmldom answers). */
  getElementById(id: string): TapeElement | null {
    for (let node: TapeNode | null = this.documentElement; node !== null; node = following(node)) {
      if (node instanceof TapeElement && node.getAttribute('id') === id) return node;
    }
    return null;
  }
}

/** The node after `node` in document order, attributes aside; null after the last. */
function following(node: TapeNode): TapeNode | null {
  if (node.firstChild !== null) return node.firstChild;
  for (let at: TapeNode | null = node; at !== null; at = at.parentNode) {
    if (at.nextSibling !== null) return at.nextSibling;
  }
  return null;
}

/** An element's attributes as xpath.js reads them: `length` and `item(k)`. */
class TapeAttributes {
  readonly #nodes: TapeAttribute[];

  constructor(nodes: TapeAttribute[]) {
    this.#nodes = nodes;
  }

  get length(): number {
    return this.#nodes.length;
  }

  item(index: number): TapeAttribute | null {
    return this.#nodes[index] ?? null;
  }
}

class TapeElement extends TapeParent {
  readonly nodeType = ELEMENT_NODE;
  readonly nodeName: string;
  readonly #source: XmlDocument;
  readonly #record: number;
  #attributes: TapeAttributes | null = null;

  constructor(owner: TapeDocument, source: XmlDocument, record: number) {
    const nameStart = source.tape[record]!;
    super(owner, nameStart - 1);
    this.#source = source;
    this.#record = record;
    this.nodeName = source.text.slice(nameStart, source.tape[record + 1]);
  }

  get localName(): string {
    return this.nodeName;
  }

  get tagName(): string {
    return this.nodeName;
  }

  protected makeChildren(): void {
    const source = this.#source;
    const tape = source.tape;
    const at = this.#record;
    const owner = this.ownerDocument!;
    let cursor = tape[at + 2]! + 1;
    for (let child = at + RECORD; child < tape[at + 5]!; child = tape[child + 5]!) {
      this.appendContent(source, cursor, tape[child]! - 1, true);
      this.append(new TapeElement(owner, source, child));
      cursor = tape[child + 4]!;
    }
    this.appendContent(source, cursor, tape[at + 3]!, true);
  }

  get attributes(): TapeAttributes {
    if (this.#attributes === null) {
      const list = attributeList(this.#source, this.#record);
      const count = list.length / 2;
      const nodes: TapeAttribute[] = [];
      for (let k = 0; k < count; k++) {
        const order = this.order + (k + 1) / (count + 1);
        nodes.push(new TapeAttribute(this, list[k * 2]!, list[k * 2 + 1]!, order));
      }
      this.#attributes = new TapeAttributes(nodes);
    }
    return this.#attributes;
  }

  getAttribute(name: string): string | null {
    const attributes = this.attributes;
    for (let k = 0; k < attributes.length; k++) {
      const attribute = attributes.item(k)!;
      if (attribute.name === name) return attribute.value;
    }
    return null;
  }

  /** Only attributes in no namespace exist in a body without namespaces. */
  getAttributeNS(namespace: string | null, name: string): string | null {
    return namespace === null || namespace === '' ? this.getAttribute(name) : null;
  }
}

class TapeAttribute extends TapeNode {
  readonly nodeType = ATTRIBUTE_NODE;

  constructor(
    readonly ownerElement: TapeElement,
    readonly name: string,
    readonly value: string,
    order: number,
  ) {
    super(ownerElement.ownerDocument, order);
  }

  get nodeName(): string {
    return this.name;
  }

  get localName(): string {
    return this.name;
  }

  override get nodeValue(): string {
    return this.value;
  }
}

class TapeText extends TapeNode {
  readonly nodeType = TEXT_NODE;
  readonly nodeName = '#text';
  readonly #source: XmlDocument;
  readonly #to: number;
  #value: string | null = null;

  constructor(owner: TapeDocument, source: XmlDocument, from: number, to: number) {
    super(owner, from);
    this.#source = source;
    this.#to = to;
  }

  override get nodeValue(): string {
    this.#value ??= regionValue(this.#source.text, this.order, this.#to);
    return this.#value;
  }

  get data(): string {
    return this.nodeValue;
  }
}

class TapeComment extends TapeNode {
  readonly nodeType = COMMENT_NODE;
  readonly nodeName = '#comment';

  constructor(
    owner: TapeDocument,
    order: number,
    readonly data: string,
  ) {
    super(owner, order);
  }

  override get nodeValue(): string {
    return this.data;
  }
}

class TapeProcessingInstruction extends TapeNode {
  readonly nodeType = PROCESSING_INSTRUCTION_NODE;

  constructor(
    owner: TapeDocument,
    order: number,
    readonly target: string,
    readonly data: string,
  ) {
    super(owner, order);
  }

  get nodeName(): string {
    return this.target;
  }

  override get nodeValue(): string {
    return this.data;
  }
}

/** A processing instruction from what lies between `<?` and `?>`: its target, then white space, then its data. */
function processingInstruction(owner: TapeDocument, order: number, body: string): TapeProcessingInstruction {
  const space = body.search(/[\x20\t\n]/);
  if (space < 0) return new TapeProcessingInstruction(owner, order, body, '');
  return new TapeProcessingInstruction(
    owner,
    order,
    body.slice(0, space),
    body.slice(space).replace(/^[\x20\t\n]+/, ''),
  );
}

/** Where the prolog's comments and processing instructions may start: after a BOM and the XML declaration. */
function prologStart(text: string): number {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (text.startsWith('<?xml', i)) {
    const after = text.charCodeAt(i + 5);
    if (after === 0x20 || after === 0x09 || after === 0x0a || after === 0x0d || after === 0x3f)
      i = text.indexOf('?>', i + 5) + 2;
  }
  return i;
}

/** The document node of a parsed body without namespaces, for xpath.js to evaluate on. */
export function buildTapeDom(document: XmlDocument): object {
  return new TapeDocument(document);
}
