/**
 * GET /api/v1/events/stream (contract §5.9, §6.4), the route table's `streaming` entry, served by
 * a Lambda function URL in response-streaming mode (the local runtime runs this same handler over
 * a Node response, local/stream-adapter.ts). Built by the same `http()` factory as every route, in
 * its streaming mode: CORS, auth, query validation, logging and the error envelope are the one chain, and
 * everything that can fail with a JSON answer (preflight, 401, query errors, an unknown cursor)
 * is settled before the first byte. Then core/event-stream.ts writes into the body stream until
 * its lifetime or the client ends.
 */
import { PassThrough } from 'node:stream';
import { DEFAULT_TIMING, runStream, startOf } from '../../core/event-stream.js';
import type { StreamQuery, StreamSink, StreamStart, StreamTiming } from '../../core/event-stream.js';
import { watchSession } from '../../core/session-watch.js';
import type { Session } from '../../core/sessions.js';
import { RouteNotFoundError } from '../../errors.js';
import { authenticatedSession } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { header } from '../../middleware/types.js';
import { queryBoolean, queryInt } from '../../middleware/validate.js';
import { env } from '../../platform/env.js';
import { logger } from '../../platform/logger.js';
import { edgeOnly } from '../../middleware/origin-verify.js';
import { withUsage } from '../../platform/usage.js';
import * as z from '../../platform/zod.js';
import { preflight, stream } from '../../model/replies.js';
import { streamRoute } from '../../../lib/routes.js';

export const schemas = {
  query: z.object({
    cursor: z.optional(z.string()),
    ephemeral: z.optional(queryBoolean),
    limit: queryInt(1, 200, 200),
    token: z.optional(z.string()),
  }),
  replies: {
    200: stream(
      'Server-sent events (§6.4), unbuffered: `: stream opened`, then each event as `event: <type>`, ' +
        '`data: <its envelope {id, type, timestamp, payload} as one line of JSON: an Event>` and `id: <event id>`, ' +
        'a `: keepalive` comment every 15 s. The service ends a stream after at most 14 minutes with an `id:` ' +
        'to resume from (`cursor` or `Last-Event-ID`) and `retry:`. Errors come before the stream, as JSON.',
      'text/event-stream',
    ),
    204: preflight(),
  },
};

/** For the API document: the header an EventSource sends when it reconnects (§6.4), read below. */
export const documented = {
  header: z.object({
    'Last-Event-ID': z.optional(z.string()).check(
      z.meta({
        description: 'Resumes after this event when no `cursor` is given; an unknown id starts live (§6.4).',
      }),
    ),
  }),
};

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
    ...(e.SSE_IDLE_POLL_MS ? { idlePollMs: e.SSE_IDLE_POLL_MS } : {}),
    ...(e.SSE_WARM_MS !== undefined ? { warmMs: e.SSE_WARM_MS } : {}),
    ...(e.SSE_WARM_POLL_MS ? { warmPollMs: e.SSE_WARM_POLL_MS } : {}),
    ...(e.SSE_IDLE_RELEASE_MS !== undefined ? { idleReleaseMs: e.SSE_IDLE_RELEASE_MS } : {}),
    ...(e.SSE_RETRY_MS ? { reconnectMs: e.SSE_RETRY_MS } : {}),
    wakeOnWrites: e.SSE_WRITE_BELL === 'on',
  };
}

/** The body stream as core's sink: closed once the client went away (the pipe destroys it). */
function sinkOver(stream: PassThrough): StreamSink {
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

/**
 * A stream authenticated by a browser session ends with a comment within SESSION_CHECK_MS of the
 * session ending (core/session-watch.ts; the client's reconnect then gets the 401). The sink reads
 * as closed from then on, so the stream's loop stops and writes nothing more.
 */
function endingWithSession(sink: StreamSink, body: PassThrough, session: Session | undefined) {
  if (!session) return { sink, stop: () => {} };
  let ended = false;
  const stop = watchSession(session, () => {
    ended = true;
    void sink.write(': session ended; sign in again\n\n').then(() => body.end());
  });
  const bound: StreamSink = {
    get closed() {
      return ended || sink.closed;
    },
    write: (text) => (ended ? Promise.resolve() : sink.write(text)),
  };
  return { sink: bound, stop };
}

/**
 * Feeds the body after the response has started (the request line is already logged), so its
 * own lines carry the request id, and its DynamoDB spend is the connection's (idle or busy), the
 * session checks' included.
 */
async function pump(
  body: PassThrough,
  start: StreamStart,
  q: StreamQuery,
  requestId: string,
  session: Session | undefined,
): Promise<void> {
  const opened = Date.now();
  let stop = () => {};
  try {
    const { usage, result } = withUsage(() => {
      const watched = endingWithSession(sinkOver(body), body, session);
      stop = watched.stop;
      return runStream(watched.sink, start, q, timing());
    });
    await result;
    const ms = Date.now() - opened;
    logger.info('stream closed', { requestId, route: ROUTE_KEY, ms, fromSeq: start.afterSeq, ddb: usage });
    if (env().EXPOSE_USAGE_HEADERS === '1' && !body.writableEnded && !body.destroyed) {
      const units = `rcu=${usage.readUnits.toFixed(2)} wcu=${usage.writeUnits.toFixed(2)}`;
      body.write(`: usage ms=${ms} calls=${usage.calls} ${units}\n\n`);
    }
  } catch (error) {
    // Mid-stream: the status line is gone; end the stream and let the client reconnect.
    logger.error('stream failed', { requestId, route: ROUTE_KEY, error });
  } finally {
    stop();
    body.end();
  }
}

const ROUTE_KEY = `${streamRoute.method} ${streamRoute.path}`;

// Method, auth class (the secret whenever it is on, §1.11) and route key come from the route table.
const streamHandler = http(
  'events/stream',
  schemas,
  async ({ event, query, requestId }) => {
    const method = event.requestContext?.http?.method ?? 'GET';
    if (method === 'OPTIONS') return { status: 204 };
    if (method !== 'GET') throw new RouteNotFoundError();
    const q = {
      cursor: query.cursor,
      lastEventId: header(event, 'last-event-id'),
      ephemeral: query.ephemeral ?? true,
      limit: query.limit,
    };
    const start = await startOf(q, Date.now());
    const body = new PassThrough();
    void pump(body, start, q, requestId, authenticatedSession(event));
    return { status: 200, headers: STREAM_HEADERS, stream: body };
  },
  { streaming: true },
);

// Before anything else: in a deployed stack a request that did not come through CloudFront gets a
// 404 at once (middleware/origin-verify.ts).
export const handler = edgeOnly(streamHandler);
