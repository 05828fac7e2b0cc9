/**
 * A request the HTTP parser refused (malformed, headers too large) gets a JSON error like any
 * other bad request, instead of a bare 400.
 */
import type { Socket } from 'node:net';

export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    error: {
      name: 'HttpError',
      message: tooLarge
        ? 'the request headers are too large'
        : `the request is not valid HTTP (${error.code ?? 'parse error'})`,
    },
  });
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
