/**
 * GET /api/v1/events/stream (contract §5.9, §6.4), served by a Lambda function URL in
 * response-streaming mode (the local runtime runs this same handler over a Node response,
 * local/stream-adapter.ts). Everything that can fail with a JSON answer (CORS preflight, the
 * 401 for a missing secret, query errors, an unknown cursor) is settled before the first byte
 * of the stream; then core/event-stream.ts streams until its lifetime or the client ends.
 */
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { Writable } from 'node:stream';
import { z } from 'zod';
import { DEFAULT_TIMING, runStream, startOf } from '../core/event-stream.js';
import type { StreamSink, StreamTiming } from '../core/event-stream.js';
import { RouteNotFoundError, UnauthorizedError } from '../errors.js';
import { corsHeaders } from '../middleware/cors.js';
import { presentsSecret, requiresSecret } from '../middleware/auth.js';
import { errorResult } from '../middleware/error-envelope.js';
import { header, jsonResult } from '../middleware/types.js';
import type { HttpResult } from '../middleware/types.js';
import { parseOrThrow, queryBoolean, queryInt } from '../middleware/validate.js';
import { getConfig } from '../platform/config.js';
import { env } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { withUsage } from '../platform/usage.js';

const Query = z.object({
  cursor: z.string().optional(),
  ephemeral: queryBoolean.optional(),
  limit: queryInt(1, 200, 200),
  token: z.string().optional(),
});

const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

function timing(): StreamTiming {
  const e = env();
  return {
    ...DEFAULT_TIMING,
    ...(e.SSE_LIFETIME_MS ? { lifetimeMs: e.SSE_LIFETIME_MS } : {}),
    ...(e.SSE_KEEPALIVE_MS ? { keepaliveMs: e.SSE_KEEPALIVE_MS } : {}),
    ...(e.SSE_HOLE_GRACE_MS ? { holeGraceMs: e.SSE_HOLE_GRACE_MS } : {}),
  };
}

/** A whole (non-stream) response, with the CORS headers: status line, headers, body, end. */
function reply(stream: Writable, result: HttpResult, cors: Record<string, string>): void {
  awslambda.HttpResponseStream.from(stream, {
    statusCode: result.statusCode,
    headers: { ...cors, ...result.headers },
  }).end(result.body);
}

function sinkOver(stream: Writable): StreamSink {
  let closed = false;
  stream.on('close', () => (closed = true));
  stream.on('error', () => (closed = true));
  return {
    get closed() {
      return closed || stream.destroyed || stream.writableEnded;
    },
    write: (text) =>
      new Promise<void>((ok) => {
        if (closed) return ok();
        stream.write(text, (error) => {
          if (error) closed = true;
          ok();
        });
      }),
  };
}

async function serveStream(event: APIGatewayProxyEventV2, responseStream: Writable, context: Context): Promise<void> {
  const requestId = event.requestContext?.requestId || context.awsRequestId;
  logger.resetKeys();
  logger.appendKeys({ requestId, route: 'GET /api/v1/events/stream' });
  let cors: Record<string, string> = {};
  let streaming = false;
  try {
    const config = await getConfig();
    cors = corsHeaders(event, config);
    const method = event.requestContext?.http?.method ?? 'GET';
    if (method === 'OPTIONS') return reply(responseStream, jsonResult(204, undefined), cors);
    if (method !== 'GET') throw new RouteNotFoundError();
    // The event stream always needs the secret when it is enabled (§1.11), whatever the read
    // toggle: it is authenticated as a write route is.
    if (requiresSecret('write', config) && !presentsSecret(event, config.security.instanceSecret))
      throw new UnauthorizedError();
    const query = parseOrThrow(Query, event.queryStringParameters ?? {});
    const q = {
      cursor: query.cursor,
      lastEventId: header(event, 'last-event-id'),
      ephemeral: query.ephemeral ?? true,
      limit: query.limit,
    };
    const start = await startOf(q, Date.now());
    streaming = true;
    const stream = awslambda.HttpResponseStream.from(responseStream, {
      statusCode: 200,
      headers: { ...STREAM_HEADERS, ...cors },
    });
    const opened = Date.now();
    const sink = sinkOver(stream);
    // The connection's DynamoDB spend (what an idle or busy stream costs), logged at the end.
    const { usage, result } = withUsage(() => runStream(sink, start, q, timing()));
    await result;
    const ms = Date.now() - opened;
    logger.info('stream closed', { ms, fromSeq: start.afterSeq, ddb: usage });
    if (env().EXPOSE_USAGE_HEADERS === '1' && !sink.closed) {
      await sink.write(
        `: usage ms=${ms} calls=${usage.calls} rcu=${usage.readUnits.toFixed(2)} wcu=${usage.writeUnits.toFixed(2)}\n\n`,
      );
    }
    stream.end();
  } catch (error) {
    if (streaming) {
      // Mid-stream: the status line is gone; end the stream and let the client reconnect.
      logger.error('stream failed', { error });
      if (!responseStream.writableEnded) responseStream.end();
      return;
    }
    try {
      reply(responseStream, errorResult(error), cors);
    } catch {
      responseStream.end();
    }
  }
}

export const handler = awslambda.streamifyResponse(serveStream);
