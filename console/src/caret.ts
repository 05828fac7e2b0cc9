/** The selector's line holding `column` (1-based) with a `^` under it, as `jms-gateway selector check` prints it. */
export function caret(text: string, column: number): string {
  const offset = column - 1;
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const lineEndAt = text.indexOf('\n', offset);
  const line = text.slice(lineStart, lineEndAt < 0 ? text.length : lineEndAt).replace(/[\t\r\f]/g, ' ');
  const lineNumber = text.slice(0, lineStart).split('\n').length;
  const prefix = text.includes('\n') ? `line ${lineNumber}: ` : '  ';
  return `${prefix}${line}\n${' '.repeat(prefix.length + offset - lineStart)}^`;
}
