/**
 * Runs the Lambda response-streaming handler (functions/http/events/stream.ts) over a Node HTTP
 * response. In Lambda, the runtime provides the `awslambda` global; here a small stand-in
 * gives the same two calls: `streamifyResponse(fn)` (the handler as is) and
 * `HttpResponseStream.from(stream, { statusCode, headers })` (the status line and headers,
 * then the body straight through, unbuffered).
 */
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';

interface Metadata {
  statusCode?: number;
  headers?: Record<string, string>;
}

export function installAwsLambdaGlobal(): void {
  // Other libraries may already have put something on the global (the Lambda invoke store).
  const g = globalThis as unknown as { awslambda?: Record<string, unknown> };
  const target = (g.awslambda ??= {});
  if (typeof target.streamifyResponse === 'function') return;
  target.streamifyResponse = <T>(handler: T): T => handler;
  target.HttpResponseStream = {
    from(stream: Writable, metadata: Metadata): Writable {
      const res = stream as ServerResponse;
      res.writeHead(metadata.statusCode ?? 200, metadata.headers ?? {});
      res.flushHeaders();
      return res;
    },
  };
}
