/**
 * The local adapter's answer to requests Node's HTTP parser refuses before any handler could see
 * them (an over-long URL or header block, bytes that are no HTTP, a broken request line): the
 * contract's error envelope instead of Node's bare 431/400, and never written over an answer
 * still being sent on the same connection. local/server.ts installs it as the server's
 * `clientError` listener and tracks each answer with trackAnswer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Node's own limit on the request line plus headers (its `maxHeaderSize` default, set explicitly
 * so the answer below can name it); API Gateway's is lower (10 KB), so nothing that passes AWS is
 * refused here.
 */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * A request Node's parser refuses before any handler could see it (an over-long URL or header
 * block, raw bytes that are no HTTP token, a broken request line): Node would write a bare
 * 431/400 with no body; this writes the contract's envelope (§1.7) straight to the socket, as
 * `clientError` requires. Too large → 413 PAYLOAD_TOO_LARGE (the contract's one size status);
 * anything else → 400 VALIDATION_ERROR.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooBig = error.code === 'HPE_HEADER_OVERFLOW';
  const status = tooBig ? '413 Payload Too Large' : '400 Bad Request';
  const body = JSON.stringify({
    error: tooBig
      ? {
          code: 'PAYLOAD_TOO_LARGE',
          message: `Request line and headers exceed ${MAX_HEADER_BYTES} bytes.`,
          details: { maxHeaderBytes: MAX_HEADER_BYTES },
        }
      : { code: 'VALIDATION_ERROR', message: 'Malformed HTTP request.', details: null },
  });
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/**
 * The answers not yet ended on each connection (several when a client pipelines requests), for
 * `clientError`: Node's parser reports junk after a complete request while that request is still
 * being answered, and writing the 400 then (and closing) would lose the answer.
 */
const unanswered = new WeakMap<Duplex, Set<ServerResponse>>();
/** Connections to close once their answers are written (onClientError). */
const closing = new WeakSet<Duplex>();

/** Notes `res` as being answered on its connection until it finishes or closes (for onClientError). */
export function trackAnswer(req: IncomingMessage, res: ServerResponse): void {
  const open = unanswered.get(req.socket) ?? new Set<ServerResponse>();
  unanswered.set(req.socket, open);
  open.add(res);
  const done = () => open.delete(res);
  res.once('finish', done);
  res.once('close', done);
}

/**
 * `clientError` with the connection's answers in mind: while a request on it is still being
 * answered, the answer is written in full (with `connection: close` when its head is not sent yet)
 * and the connection closes after it, without a 400 over it; otherwise answerClientError.
 */
export function onClientError(error: Error & { code?: string }, socket: Duplex): void {
  // The parser stays failed: every later byte on this connection reports the error again.
  if (closing.has(socket) && error.code !== 'ECONNRESET') return;
  const open = [...(unanswered.get(socket) ?? [])].filter((res) => !res.writableEnded);
  if (open.length === 0 || error.code === 'ECONNRESET' || !socket.writable) {
    answerClientError(error, socket);
    return;
  }
  closing.add(socket);
  for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
  const ended = open.map((res) => new Promise((ok) => (res.writableFinished ? ok(undefined) : res.once('close', ok))));
  void Promise.all(ended).then(() => socket.end());
}
