/**
 * A small, strict XML parser for message bodies (SEL-4). It checks that the body is well-formed
 * and records its structure for the fast XPath paths, and for the DOM (tape-dom.ts) of the XPath
 * expressions they cannot answer; xmldom only parses bodies with namespaces for those. Because
 * every body goes through this parser first, "malformed" means the same thing on every path, and
 * no DTD ever reaches xmldom.
 *
 * Security: a body with a document type declaration (`<!DOCTYPE`) is refused outright, so no
 * entity is ever declared, expanded or fetched (no XXE, no billion laughs). Only the five
 * predefined entities and character references are understood; any other `&name;` is a
 * well-formedness error, as XML requires without a DTD.
 *
 * Bounds (xpath-limits.ts): a body longer, deeper, with more elements or with more attributes on
 * one element than the limits allow is refused like a malformed one, before any of it reaches
 * xmldom, and the parse is linear in the body in every case, so no body can stall the event loop.
 *
 * Speed matters (a topic may test every published body), so the parser allocates no strings:
 * it writes a "tape" with one fixed-size record per element (offsets into the text), and text is
 * cut from the body, between those offsets, only for the node an XPath expression finally selects.
 */
import { xpathLimits, type XPathLimitName, type XPathLimits } from './xpath-limits.js';

/**
 * Record layout, {@link RECORD} ints per element, in document order:
 * `[nameStart, nameEnd, tagEnd, closeStart, closeEnd, next]`: the name, the offset of the start
 * tag's `>` (attributes lie between `nameEnd` and `tagEnd`), the offsets where the end tag starts
 * and ends (both `tagEnd + 1` for `<empty/>`; the content lies between `tagEnd + 1` and
 * `closeStart`), and the record after the element's subtree. Its children are the records from
 * the next one up to `next`, each child's `next` leading to its sibling.
 */
export const RECORD = 6;

/** A parsed, well-formed body. */
export interface XmlDocument {
  /** The body text the tape points into. */
  readonly text: string;
  /** The element records; the root element is the first. A plain array of small integers: cheaper to allocate than a typed array. */
  readonly tape: readonly number[];
  /** True when a prefixed name or a namespace declaration occurs: XPath name tests then depend on namespaces. */
  readonly namespaced: boolean;
  /** How many attributes the body has in all (its elements are `tape.length / RECORD`). */
  readonly attributes: number;
}

/** Why a body was refused: not well-formed (or a DTD), or over one of the limits. */
export type XmlRefusal = 'malformed' | Exclude<XPathLimitName, 'maxSteps'>;

/** Thrown inside the parser and caught by {@link readXml}; constants, so failing costs no stack trace. */
class Refused {
  constructor(readonly reason: XmlRefusal) {}
}
const MALFORMED = new Refused('malformed');
const OVER_LIMIT = {
  maxBodyLength: new Refused('maxBodyLength'),
  maxDepth: new Refused('maxDepth'),
  maxElements: new Refused('maxElements'),
  maxAttributes: new Refused('maxAttributes'),
} as const;

function fail(): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught in readXml.
  throw MALFORMED;
}

function over(limit: keyof typeof OVER_LIMIT): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught in readXml.
  throw OVER_LIMIT[limit];
}

const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const AMP = 0x26;
const EQUALS = 0x3d;

/** Parses an XML body; null when it is not well-formed, declares a DTD or is over a limit. Never throws. */
export function parseXml(text: string, limits: XPathLimits = xpathLimits()): XmlDocument | null {
  const result = readXml(text, limits);
  return typeof result === 'string' ? null : result;
}

/** Parses an XML body, or says why it was refused. Never throws. */
export function readXml(text: string, limits: XPathLimits = xpathLimits()): XmlDocument | XmlRefusal {
  try {
    maxDepth = limits.maxDepth;
    maxAttributes = limits.maxAttributes;
    maxTape = limits.maxElements * RECORD;
    if (text.length > limits.maxBodyLength) over('maxBodyLength');
    return parseDocument(text);
  } catch (error) {
    // Anything unexpected too: a body we cannot read is a body that does not parse, and a
    // selector must never throw while matching.
    return error instanceof Refused ? error.reason : 'malformed';
  } finally {
    // Do not keep a huge scratch array alive because of one huge body.
    if (tape.length > MAX_KEPT_SCRATCH) tape = new Array<number>(INITIAL_SCRATCH).fill(0);
    manyAttributeNames = null;
  }
}

// Parsing is synchronous, so the parser's working state can live at module scope.
// The tape is written into a scratch array that stays allocated between parses (growing
// an array element by element costs more than the final copy).
const INITIAL_SCRATCH = 4096;
const MAX_KEPT_SCRATCH = 1 << 16;
let tape: number[] = new Array<number>(INITIAL_SCRATCH).fill(0);
let used = 0;
let position = 0;
let namespaced = false;
let attributeTotal = 0;
let maxDepth = 0;
let maxAttributes = 0;
/** The tape length {@link XPathLimits.maxElements} allows. */
let maxTape = 0;

/** Records an element whose start tag ends at `tagEnd`, as if it were empty; its end tag fills in the rest. */
function record(nameStart: number, nameEnd: number, tagEnd: number): number {
  const at = used;
  if (at + RECORD > maxTape) over('maxElements');
  if (at + RECORD > tape.length) tape = tape.concat(new Array<number>(tape.length).fill(0));
  used = at + RECORD;
  tape[at] = nameStart;
  tape[at + 1] = nameEnd;
  tape[at + 2] = tagEnd;
  tape[at + 3] = tagEnd + 1;
  tape[at + 4] = tagEnd + 1;
  tape[at + 5] = at + RECORD;
  return at;
}

function parseDocument(text: string): XmlDocument {
  namespaced = false;
  used = 0;
  attributeTotal = 0;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  if (text.startsWith('<?xml', i)) {
    const after = text.charCodeAt(i + 5);
    if (isSpace(after) || after === QUESTION) i = skipPast(text, i + 5, '?>');
  }
  i = skipMisc(text, i);
  if (text.charCodeAt(i) !== LT || !isNameStart(text.charCodeAt(i + 1))) fail();
  parseElements(text, i);
  if (skipMisc(text, position) < text.length) fail();
  return { text, tape: tape.slice(0, used), namespaced, attributes: attributeTotal };
}

/** Skips white space, comments and processing instructions (what may surround the root). */
function skipMisc(text: string, i: number): number {
  const n = text.length;
  while (i < n) {
    const code = text.charCodeAt(i);
    if (isSpace(code)) {
      i++;
    } else if (code === LT && text.charCodeAt(i + 1) === BANG && text.startsWith('<!--', i)) {
      i = skipComment(text, i);
    } else if (code === LT && text.charCodeAt(i + 1) === QUESTION) {
      i = skipProcessingInstruction(text, i);
    } else {
      // Anything else, a DOCTYPE included, is the root or an error.
      break;
    }
  }
  return i;
}

function skipPast(text: string, from: number, terminator: string): number {
  const end = text.indexOf(terminator, from);
  if (end < 0) fail();
  return end + terminator.length;
}

function skipComment(text: string, lt: number): number {
  const end = text.indexOf('--', lt + 4);
  // "--" may only appear as the end of the comment.
  if (end < 0 || text.charCodeAt(end + 2) !== GT) fail();
  return end + 3;
}

function skipProcessingInstruction(text: string, lt: number): number {
  const end = nameEnd(text, lt + 2);
  if (end === lt + 2) fail(); // a processing instruction starts with its target's name
  // The XML declaration is only allowed at the very start.
  if (end - lt - 2 === 3 && text.slice(lt + 2, end).toLowerCase() === 'xml') fail();
  return skipPast(text, end, '?>');
}

/** The root element and everything inside it. Iterative, so deep nesting cannot overflow the stack. */
function parseElements(text: string, start: number): void {
  // Open elements as record offsets; the name of each is on its record.
  const stack: number[] = [];
  let current = parseStartTag(text, start);
  let i = position;
  if (current < 0) return;
  // Text is checked only around '&' (references must be well-formed) and ']]>' (not allowed in
  // text). Rather than look at every character, keep the next occurrence of each (found with
  // indexOf, which is fast) and compare positions.
  let nextAmp = find(text, '&', i);
  let nextCdataEnd = find(text, ']]>', i);
  while (true) {
    const lt = text.indexOf('<', i);
    if (lt < 0) fail();
    if (lt > i) {
      // Text is only checked here; it is read from the body when an expression selects it.
      if (nextAmp < i) nextAmp = find(text, '&', i);
      if (nextCdataEnd < i) nextCdataEnd = find(text, ']]>', i);
      if (nextCdataEnd < lt) fail();
      if (nextAmp < lt) nextAmp = checkReferences(text, nextAmp, lt);
    }
    const next = text.charCodeAt(lt + 1);
    if (next === SLASH) {
      // The end tag must repeat the open element's name exactly: compare instead of scanning a name.
      const nameStart = tape[current]!;
      const nameLength = tape[current + 1]! - nameStart;
      if (!sameRange(text, lt + 2, nameStart, nameLength) || isNameChar(text.charCodeAt(lt + 2 + nameLength)))
        fail();
      i = skipSpaces(text, lt + 2 + nameLength);
      if (text.charCodeAt(i) !== GT) fail();
      i++;
      tape[current + 3] = lt;
      tape[current + 4] = i;
      tape[current + 5] = used;
      const parent = stack.pop();
      if (parent === undefined) {
        position = i;
        return;
      }
      current = parent;
    } else if (next === BANG) {
      if (text.startsWith('<!--', lt)) {
        i = skipComment(text, lt);
      } else if (text.startsWith('<![CDATA[', lt)) {
        const end = text.indexOf(']]>', lt + 9);
        if (end < 0) fail();
        i = end + 3;
      } else {
        fail();
      }
    } else if (next === QUESTION) {
      i = skipProcessingInstruction(text, lt);
    } else {
      // The open elements are the stack and the current one; this child is one deeper.
      if (stack.length + 2 > maxDepth) over('maxDepth');
      const child = parseStartTag(text, lt);
      i = position;
      if (child >= 0) {
        stack.push(current);
        current = child;
      }
    }
  }
}

/** The index of `what` at or after `from`, or Infinity when there is none (so `<` comparisons just work). */
function find(text: string, what: string, from: number): number {
  const index = text.indexOf(what, from);
  return index < 0 ? Infinity : index;
}

/**
 * Reads a start tag at `lt` and records its element. Returns the record of an element left open,
 * or -1 for a self-closing tag; leaves {@link position} after the tag.
 */
function parseStartTag(text: string, lt: number): number {
  const nameStart = lt + 1;
  if (!isNameStart(text.charCodeAt(nameStart))) fail();
  const nameStop = nameEnd(text, nameStart);
  let i = nameStop;
  let attributes = 0;
  while (true) {
    const spaced = i;
    i = skipSpaces(text, i);
    const code = text.charCodeAt(i);
    if (code === GT) {
      position = i + 1;
      return record(nameStart, nameStop, i);
    }
    if (code === SLASH && text.charCodeAt(i + 1) === GT) {
      position = i + 2;
      record(nameStart, nameStop, i + 1);
      return -1;
    }
    // Attributes must be separated from the name and from each other by white space.
    if (i === spaced || !isNameStart(code)) fail();
    const attributeStart = i;
    const attributeStop = nameEnd(text, i);
    if (attributeStop - attributeStart === 5 && sameRange(text, attributeStart, 0, 5, 'xmlns'))
      namespaced = true;
    if (attributes >= maxAttributes) over('maxAttributes');
    if (attributes > 0) checkUniqueAttribute(text, attributes, attributeStart, attributeStop);
    if (attributes < MAX_CHECKED_ATTRIBUTES) {
      attributeNames[attributes * 2] = attributeStart;
      attributeNames[attributes * 2 + 1] = attributeStop;
    }
    attributes++;
    attributeTotal++;
    i = skipSpaces(text, attributeStop);
    if (text.charCodeAt(i) !== EQUALS) fail();
    i = skipSpaces(text, i + 1);
    const quote = text.charCodeAt(i);
    if (quote !== 0x22 && quote !== 0x27) fail();
    i = attributeValueEnd(text, i + 1, quote) + 1;
  }
}

// Where the current tag's attribute names are, to find duplicates without scanning the tag again.
const MAX_CHECKED_ATTRIBUTES = 64;
const attributeNames = new Int32Array(MAX_CHECKED_ATTRIBUTES * 2);
/**
 * The names of the current tag's attributes once it has more than {@link MAX_CHECKED_ATTRIBUTES}:
 * comparing each new name with all the earlier ones would be quadratic (50,000 attributes took
 * over half a minute), a set keeps a hostile tag linear. Usual tags never allocate it.
 */
let manyAttributeNames: Set<string> | null = null;

/** Fails when the attribute at `start`..`end` repeats one of the `count` before it in the same tag. */
function checkUniqueAttribute(text: string, count: number, start: number, end: number): void {
  const length = end - start;
  if (count >= MAX_CHECKED_ATTRIBUTES) {
    checkUniqueInSet(text, count, start, end);
    return;
  }
  for (let k = 0; k < count; k++) {
    const otherStart = attributeNames[k * 2]!;
    if (attributeNames[k * 2 + 1]! - otherStart === length && sameRange(text, otherStart, start, length))
      fail();
  }
}

/** The check for tags with very many attributes: a set of names, filled from the recorded ones at the first overflow. */
function checkUniqueInSet(text: string, count: number, start: number, end: number): void {
  if (count === MAX_CHECKED_ATTRIBUTES || manyAttributeNames === null) {
    manyAttributeNames = new Set<string>();
    for (let k = 0; k < MAX_CHECKED_ATTRIBUTES; k++)
      manyAttributeNames.add(text.slice(attributeNames[k * 2], attributeNames[k * 2 + 1]));
  }
  const name = text.slice(start, end);
  if (manyAttributeNames.has(name)) fail();
  manyAttributeNames.add(name);
}

/** The offset of the quote closing the attribute value at `start`; the value may not hold `<`, and its references must be well-formed. */
function attributeValueEnd(text: string, start: number, quote: number): number {
  const n = text.length;
  let amp = -1;
  let i = start;
  // One pass finds the closing quote and checks the value: values are short, so this beats indexOf.
  while (true) {
    if (i >= n) fail();
    const code = text.charCodeAt(i);
    if (code === quote) break;
    if (code === LT) fail();
    if (code === AMP && amp < 0) amp = i;
    i++;
  }
  if (amp >= 0) checkReferences(text, amp, i);
  return i;
}

/**
 * Checks every reference from the `&` at `amp` up to `end` (text or an attribute value); returns
 * the next `&` after `end` (Infinity when none), which the text cursor reuses.
 */
function checkReferences(text: string, amp: number, end: number): number {
  while (amp < end) {
    const semicolon = text.indexOf(';', amp + 1);
    if (semicolon < 0 || semicolon >= end) fail();
    decodeReference(text, amp + 1, semicolon);
    amp = find(text, '&', semicolon + 1);
  }
  return amp;
}

/** The text of `start`..`end` with references decoded (references already checked by the parser). */
function decodeReferences(text: string, start: number, end: number): string {
  let out = '';
  let from = start;
  let amp = text.indexOf('&', start);
  while (amp >= 0 && amp < end) {
    const semicolon = text.indexOf(';', amp + 1);
    out += text.slice(from, amp) + decodeReference(text, amp + 1, semicolon);
    from = semicolon + 1;
    amp = text.indexOf('&', from);
  }
  return out + text.slice(from, end);
}

/** The text a reference `&...;` stands for; `start`/`end` delimit the part between `&` and `;`. */
function decodeReference(text: string, start: number, end: number): string {
  const length = end - start;
  const first = text.charCodeAt(start);
  // The five predefined entities, compared by character to avoid slicing.
  if (length === 3 && first === 0x61 && sameRange(text, start, 0, 3, 'amp')) return '&';
  if (length === 2 && text.charCodeAt(start + 1) === 0x74 /* t */) {
    if (first === 0x6c /* l */) return '<';
    if (first === 0x67 /* g */) return '>';
  }
  if (length === 4 && sameRange(text, start, 0, 4, 'quot')) return '"';
  if (length === 4 && sameRange(text, start, 0, 4, 'apos')) return "'";
  const name = text.slice(start, end);
  let code: number;
  if (/^#[0-9]{1,7}$/.test(name)) code = Number(name.slice(1));
  else if (/^#x[0-9a-fA-F]{1,6}$/.test(name)) code = parseInt(name.slice(2), 16);
  // Without a DTD no other entity exists: referring to one is a well-formedness error.
  else fail();
  if (!isXmlChar(code)) fail();
  return String.fromCodePoint(code);
}

function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}

/**
 * True when `text` at `at` holds the `length` characters found in `other` (default `text`) at
 * `from`: a comparison without slicing, which is what makes the parser cheap.
 */
function sameRange(text: string, at: number, from: number, length: number, other: string = text): boolean {
  for (let k = 0; k < length; k++) if (text.charCodeAt(at + k) !== other.charCodeAt(from + k)) return false;
  return true;
}

function skipSpaces(text: string, i: number): number {
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}

/** Where the name starting at `i` ends; notes a prefixed name (a ':'), which makes the document namespaced. */
function nameEnd(text: string, i: number): number {
  while (true) {
    const code = text.charCodeAt(i);
    if (code < 128) {
      const kind = ASCII[code]!;
      if ((kind & NAME_CHAR) === 0) return i;
      if (kind === COLON) namespaced = true;
    } else if (!(code >= 0xc0 || code === 0xb7)) {
      return i;
    }
    i++;
  }
}

// Character classes of ASCII, looked up rather than compared: names are most of what is scanned
// character by character. Names: ASCII letters, '_' and ':' start a name, digits, '-' and '.' may
// follow; every non-ASCII character from U+00C0 is accepted (a superset of XML's NameChar that
// never splits a real name).
const NAME_START = 1;
const NAME_CHAR = 2;
const SPACE = 4;
const COLON = NAME_START | NAME_CHAR | 8;
const ASCII = new Uint8Array(128);
for (let code = 0; code < 128; code++) {
  const c = String.fromCharCode(code);
  if (/[A-Za-z_]/.test(c)) ASCII[code] = NAME_START | NAME_CHAR;
  else if (/[0-9.-]/.test(c)) ASCII[code] = NAME_CHAR;
  else if (/[ \t\n\r]/.test(c)) ASCII[code] = SPACE;
}
ASCII[0x3a] = COLON;

function isSpace(code: number): boolean {
  return code <= 0x20 && ASCII[code] === SPACE;
}

function isNameStart(code: number): boolean {
  return code < 128 ? (ASCII[code]! & NAME_START) !== 0 : code >= 0xc0;
}

function isNameChar(code: number): boolean {
  return code < 128 ? (ASCII[code]! & NAME_CHAR) !== 0 : code >= 0xc0 || code === 0xb7;
}

// --- reading the tape ---

/** True when the element recorded at `at` has the name `name`. */
export function hasName(document: XmlDocument, at: number, name: string): boolean {
  const start = document.tape[at]!;
  return (
    document.tape[at + 1]! - start === name.length && sameRange(document.text, start, 0, name.length, name)
  );
}

/**
 * The child nodes of the element recorded at `at`, in document order: child elements as their
 * records, text nodes as their values (adjacent text and CDATA joined; comments and processing
 * instructions split text nodes and are otherwise left out).
 */
export function childNodes(document: XmlDocument, at: number): (number | string)[] {
  const { text, tape } = document;
  const nodes: (number | string)[] = [];
  let open = false;
  let cursor = tape[at + 2]! + 1;
  for (let child = at + RECORD; child < tape[at + 5]!; child = tape[child + 5]!) {
    textNodes(text, cursor, tape[child]! - 1, nodes, open);
    nodes.push(child);
    open = false;
    cursor = tape[child + 4]!;
  }
  textNodes(text, cursor, tape[at + 3]!, nodes, open);
  return nodes;
}

/** XPath's string value of an element: all its descendant text, in document order. */
export function elementValue(document: XmlDocument, at: number): string {
  const { text, tape } = document;
  let cursor = tape[at + 2]! + 1;
  let value = '';
  for (let child = at + RECORD; child < tape[at + 5]!; child = tape[child + 5]!) {
    value += regionValue(text, cursor, tape[child]! - 1) + elementValue(document, child);
    cursor = tape[child + 4]!;
  }
  return value + regionValue(text, cursor, tape[at + 3]!);
}

/**
 * Appends the text nodes of `from`..`to`, a stretch of content with no element in it, to
 * `nodes`; `open` says whether the last node is text that continues. Returns the same for the end.
 */
function textNodes(
  text: string,
  from: number,
  to: number,
  nodes: (number | string)[],
  open: boolean,
): boolean {
  let i = from;
  while (i < to) {
    const lt = text.indexOf('<', i);
    const stop = lt < 0 || lt > to ? to : lt;
    if (stop > i) open = pushText(nodes, open, characters(text, i, stop));
    if (stop === to) break;
    if (text.startsWith('<![CDATA[', lt)) {
      const end = text.indexOf(']]>', lt + 9);
      if (end > lt + 9) open = pushText(nodes, open, normalizeNewlines(text.slice(lt + 9, end)));
      i = end + 3;
    } else {
      // A comment or processing instruction (the parser let nothing else through) ends the text node.
      i = text.startsWith('<!--', lt) ? text.indexOf('-->', lt + 4) + 3 : text.indexOf('?>', lt + 2) + 2;
      open = false;
    }
  }
  return open;
}

function pushText(nodes: (number | string)[], open: boolean, value: string): boolean {
  if (open) nodes[nodes.length - 1] = (nodes[nodes.length - 1] as string) + value;
  else nodes.push(value);
  return true;
}

/** All the character data of `from`..`to`, a stretch of content with no element in it. */
export function regionValue(text: string, from: number, to: number): string {
  if (from >= to) return '';
  const lt = text.indexOf('<', from);
  if (lt < 0 || lt >= to) return characters(text, from, to);
  const nodes: (number | string)[] = [];
  textNodes(text, from, to, nodes, false);
  return nodes.join('');
}

/** Character data as XML reads it: line ends normalised, then references decoded (so &#13; stays). */
export function characters(text: string, from: number, to: number): string {
  const value = normalizeNewlines(text.slice(from, to));
  return value.includes('&') ? decodeReferences(value, 0, value.length) : value;
}

export function normalizeNewlines(value: string): string {
  return value.includes('\r') ? value.replace(/\r\n?/g, '\n') : value;
}

/**
 * The value of an attribute of the element recorded at `at`, normalised as XML says (literal
 * white space becomes a space, then references are decoded); undefined when there is none.
 */
export function attributeValue(document: XmlDocument, at: number, name: string): string | undefined {
  const { text, tape } = document;
  const tagEnd = tape[at + 2]!;
  let i = skipSpaces(text, tape[at + 1]!);
  while (i < tagEnd && isNameStart(text.charCodeAt(i))) {
    const stop = nameEnd(text, i);
    const quote = skipSpaces(text, skipSpaces(text, stop) + 1);
    const close = text.indexOf(text[quote]!, quote + 1);
    if (stop - i === name.length && sameRange(text, i, 0, name.length, name))
      return normalizedValue(text, quote + 1, close);
    i = skipSpaces(text, close + 1);
  }
  return undefined;
}

/** The attributes of the element recorded at `at`, in the order written: `[name, value, name, value, ...]`. */
export function attributeList(document: XmlDocument, at: number): string[] {
  const { text, tape } = document;
  const list: string[] = [];
  const tagEnd = tape[at + 2]!;
  let i = skipSpaces(text, tape[at + 1]!);
  while (i < tagEnd && isNameStart(text.charCodeAt(i))) {
    const stop = nameEnd(text, i);
    const quote = skipSpaces(text, skipSpaces(text, stop) + 1);
    const close = text.indexOf(text[quote]!, quote + 1);
    list.push(text.slice(i, stop), normalizedValue(text, quote + 1, close));
    i = skipSpaces(text, close + 1);
  }
  return list;
}

/** An attribute value as XML reads it: literal white space becomes a space, then references are decoded. */
function normalizedValue(text: string, start: number, end: number): string {
  let value = text.slice(start, end);
  if (/[\t\n\r]/.test(value)) value = value.replace(/\r\n|[\t\n\r]/g, ' ');
  return value.includes('&') ? decodeReferences(value, 0, value.length) : value;
}
