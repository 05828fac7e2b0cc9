/**
 * LIKE patterns (SEL-1): `_` matches one character, `%` any sequence, an escape character makes the
 * next character literal. Patterns compile to a matcher without regular expressions: the common
 * shapes become `===`, `startsWith`, `endsWith` or `includes`, and the general shape is a linear
 * scan of `%`-separated segments, so no pattern can make matching backtrack exponentially.
 * "One character" is one Unicode code point.
 */

const ANY_ONE = 0;
/** A segment between two `%`: literal chunks and single-character wildcards. */
type Segment = readonly (string | typeof ANY_ONE)[];

/** Thrown by {@link compileLike} for a malformed pattern; the parser turns it into a positioned error. */
export class LikePatternError extends Error {}

/** Compiles a LIKE pattern into a test on strings. */
export function compileLike(pattern: string, escape: string | null): (value: string) => boolean {
  const segments = splitPattern(pattern, escape);
  if (segments.every((segment) => !segment.includes(ANY_ONE))) {
    const texts = segments.map((segment) => (segment[0] as string | undefined) ?? '');
    if (texts.length === 1) {
      const literal = texts[0]!;
      return (value) => value === literal;
    }
    if (texts.length === 2) {
      const [head, tail] = texts as [string, string];
      if (tail === '') return (value) => value.startsWith(head);
      if (head === '') return (value) => value.endsWith(tail);
      return (value) =>
        value.length >= head.length + tail.length && value.startsWith(head) && value.endsWith(tail);
    }
    if (texts.length === 3 && texts[0] === '' && texts[2] === '') {
      const middle = texts[1]!;
      return (value) => value.includes(middle);
    }
  }
  if (segments.length === 1) {
    const only = segments[0]!;
    return (value) => matchAt(value, 0, only) === value.length;
  }
  return (value) => matchSegments(value, segments);
}

/** Splits a pattern at its unescaped `%`s; `%abc` gives an empty first segment. */
function splitPattern(pattern: string, escape: string | null): Segment[] {
  const segments: (string | typeof ANY_ONE)[][] = [[]];
  let literal = '';
  const flush = (): void => {
    if (literal !== '') segments[segments.length - 1]!.push(literal);
    literal = '';
  };
  const points = Array.from(pattern);
  for (let i = 0; i < points.length; i++) {
    const point = points[i]!;
    if (escape !== null && point === escape) {
      const next = points[i + 1];
      if (next === undefined) throw new LikePatternError('the LIKE pattern ends with its escape character');
      literal += next;
      i++;
    } else if (point === '%') {
      flush();
      segments.push([]);
    } else if (point === '_') {
      flush();
      segments[segments.length - 1]!.push(ANY_ONE);
    } else {
      literal += point;
    }
  }
  flush();
  return segments;
}

/** The offset after `segment` matched at `at`, or -1. */
function matchAt(value: string, at: number, segment: Segment): number {
  let position = at;
  for (const part of segment) {
    if (part === ANY_ONE) {
      if (position >= value.length) return -1;
      position += value.codePointAt(position)! > 0xffff ? 2 : 1;
    } else {
      if (!value.startsWith(part, position)) return -1;
      position += part.length;
    }
  }
  return position;
}

function nextPosition(value: string, position: number): number {
  return position + (value.codePointAt(position)! > 0xffff ? 2 : 1);
}

/**
 * Matches `first % middle... % last`: the first segment anchors at the start, the last at the end,
 * and each middle segment takes its leftmost match, which is never worse than a later one.
 */
function matchSegments(value: string, segments: readonly Segment[]): boolean {
  let position = matchAt(value, 0, segments[0]!);
  if (position < 0) return false;
  const lastIndex = segments.length - 1;
  for (let i = 1; i < lastIndex; i++) {
    const segment = segments[i]!;
    let found = -1;
    for (let start = position; start <= value.length; start = nextPosition(value, start)) {
      found = matchAt(value, start, segment);
      if (found >= 0 || start === value.length) break;
    }
    if (found < 0) return false;
    position = found;
  }
  const last = segments[lastIndex]!;
  for (let start = position; start <= value.length; start = nextPosition(value, start)) {
    if (matchAt(value, start, last) === value.length) return true;
    if (start === value.length) break;
  }
  return false;
}
