/**
 * A request body as API Gateway takes it, for the local adapter (local/server.ts) and the
 * rehearsal's HTTP API (local/rehearse/api-gateway.ts): read whole, or 'too-large' past its
 * payload limit (the rest is drained, not kept).
 */
import type { IncomingMessage } from 'node:http';

/** API Gateway's payload limit; larger bodies get the 413 answer. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export function readBody(req: IncomingMessage): Promise<Buffer | 'too-large'> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => ok(size > MAX_BODY_BYTES ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', fail);
  });
}
