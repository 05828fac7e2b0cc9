/**
 * Bounds on a configuration document, so that a hostile or broken file (a "billion laughs" of
 * aliases, a megabyte of brackets) fails fast with its position instead of taking the process's
 * memory and time: `validate`, `run` and a reload all read through these.
 */
import { Lexer } from 'yaml';

/**
 * Largest configuration file the gateway reads, in bytes (512 KiB: a thousand bridges fit). The
 * YAML parser takes about a second per megabyte, during which a reload holds the event loop.
 */
export const MAX_CONFIG_BYTES = 512 * 1024;

/**
 * Most values (mappings, lists and scalars) aliases may stand for, each use of an alias counting
 * its whole value again. A configuration is validated value by value along every path, so this
 * bounds the work aliases multiply; the values written out are bounded by the size.
 */
export const MAX_ALIASED_VALUES = 10_000;

/** Deepest nesting of mappings and lists; the deepest setting of the schema is about 6 levels down. */
export const MAX_NESTING = 64;

/** A limit a document exceeds, with the offset in the text to point at. */
export interface LimitProblem {
  readonly offset: number;
  readonly message: string;
}

/**
 * Checks what must be known before the YAML parser runs: the size, and the nesting of flow
 * collections (`[[[[...`), which the parser handles in time that grows faster than the input.
 * Both checks take time linear in the text.
 */
export function checkDocumentText(text: string): LimitProblem | undefined {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) return { offset: 0, message: tooLarge(bytes) };
  return flowNestingProblem(text);
}

/** Why a configuration of `bytes` (undefined: of a stream that goes on) is refused. */
export function tooLarge(bytes: number | undefined): string {
  return `the configuration is ${bytes === undefined ? 'longer than' : `${bytes} bytes, more than`} the limit of ${MAX_CONFIG_BYTES} bytes (512 KiB): remove what is not needed, or use aliases for repeated settings`;
}

function flowNestingProblem(text: string): LimitProblem | undefined {
  // Fewer brackets than the limit cannot nest past it: most files are done here.
  if (countFlowOpeners(text) <= MAX_NESTING) return undefined;
  // The lexer tells flow brackets from brackets in strings and comments, in linear time.
  let depth = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (CONTROL_TOKENS.has(token)) continue;
    if (token === '[' || token === '{') {
      if (++depth > MAX_NESTING) return { offset, message: TOO_DEEP };
    } else if ((token === ']' || token === '}') && depth > 0) depth--;
    offset += token.length;
  }
  return undefined;
}

/** Markers the lexer adds that are not text of the file (document start, flow end, scalar). */
const CONTROL_TOKENS = new Set(['\x02', '\x18', '\x1f']);

function countFlowOpeners(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x5b || code === 0x7b) count++;
  }
  return count;
}

/** Why a value nested deeper than {@link MAX_NESTING} is refused. */
export const TOO_DEEP = `values are nested more than ${MAX_NESTING} levels deep here: no setting of the configuration is that deep`;
