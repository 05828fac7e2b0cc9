/**
 * How a message body is shown: JSON and XML pretty-printed, bytes as a hex dump, maps and streams
 * as JSON. A huge body is cut for display; the page says so and offers the whole of it to download.
 */
import type { MessageJson } from './types.js';

/** Characters of a body shown at most: more makes the page slow and says nothing more. */
export const DISPLAY_LIMIT = 64 * 1024;

export interface FormattedBody {
  /** What to show (at most DISPLAY_LIMIT characters). */
  text: string;
  /** `JSON`, `XML`, `text`, `hex` ...: how it was formatted. */
  format: string;
  /** The whole body as text, when `text` is only its beginning. */
  whole?: string;
  /** Size of the whole body, in characters (bytes for a bytes body). */
  size: number;
}

export function formatBody(message: MessageJson): FormattedBody {
  const body = message.body;
  if (body === undefined || body === null) return { text: '(no body)', format: 'empty', size: 0 };
  if (message.type === 'bytes' && typeof body === 'string') return hexBody(body);
  if (typeof body !== 'string') return cut(JSON.stringify(body, null, 2), message.type);
  const trimmed = body.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return cut(JSON.stringify(JSON.parse(body), null, 2), 'JSON', body.length);
    } catch {
      // Not JSON after all: shown as it is.
    }
  }
  if (message.type === 'xml' || trimmed.startsWith('<')) {
    const pretty = prettyXml(body);
    if (pretty !== undefined) return cut(pretty, 'XML', body.length);
  }
  return cut(body, 'text');
}

function cut(text: string, format: string, size = text.length): FormattedBody {
  if (text.length <= DISPLAY_LIMIT) return { text, format, size };
  return { text: text.slice(0, DISPLAY_LIMIT), format, whole: text, size };
}

function hexBody(base64: string): FormattedBody {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const shown = bytes.subarray(0, DISPLAY_LIMIT / 4);
  const lines: string[] = [];
  for (let offset = 0; offset < shown.length; offset += 16) {
    const row = shown.subarray(offset, offset + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  const result: FormattedBody = { text: lines.join('\n'), format: 'hex', size: bytes.length };
  if (shown.length < bytes.length) result.whole = base64;
  return result;
}

/** The document indented two spaces a level, or undefined when it is not well-formed. */
export function prettyXml(text: string): string | undefined {
  const document = new DOMParser().parseFromString(text, 'application/xml');
  if (document.getElementsByTagName('parsererror').length > 0) return undefined;
  const lines: string[] = [];
  const declaration = /^\s*<\?xml[^?]*\?>/.exec(text);
  if (declaration) lines.push(declaration[0].trim());
  const serializer = new XMLSerializer();
  const walk = (node: Node, depth: number) => {
    const pad = '  '.repeat(depth);
    if (node.nodeType === Node.TEXT_NODE) {
      const value = node.textContent?.trim();
      if (value) lines.push(pad + serializer.serializeToString(document.createTextNode(value)));
      return;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) {
      lines.push(pad + serializer.serializeToString(node));
      return;
    }
    const element = node as Element;
    const attributes = [...element.attributes]
      .map(
        (a) => ` ${a.name}="${a.value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`,
      )
      .join('');
    const children = [...element.childNodes].filter(
      (child) => child.nodeType !== Node.TEXT_NODE || child.textContent?.trim(),
    );
    if (children.length === 0) lines.push(`${pad}<${element.tagName}${attributes}/>`);
    else if (children.length === 1 && children[0]!.nodeType === Node.TEXT_NODE)
      lines.push(
        `${pad}<${element.tagName}${attributes}>${serializer.serializeToString(document.createTextNode(children[0]!.textContent!.trim()))}</${element.tagName}>`,
      );
    else {
      lines.push(`${pad}<${element.tagName}${attributes}>`);
      for (const child of children) walk(child, depth + 1);
      lines.push(`${pad}</${element.tagName}>`);
    }
  };
  for (const child of [...document.childNodes]) walk(child, 0);
  return lines.join('\n');
}

/** `12 345 characters`, `1.2 MB`: a size for a person. */
export function describeSize(size: number, unit: string): string {
  return `${size.toLocaleString('en')} ${unit}`;
}
