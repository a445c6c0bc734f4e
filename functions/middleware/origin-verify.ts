/**
 * Proof that a request came through the stack's own CloudFront distribution (lib/constructs/edge.ts):
 * CloudFront adds the origin-verify secret as a custom origin header (ORIGIN_VERIFY_HEADER) to every
 * request it sends to the HTTP API and to the event stream's function URL, and a request that
 * reached an origin directly does not carry it.
 *
 * Three uses: the event stream's function URL answers nothing to a request without it (edgeOnly,
 * so its reserved concurrency is spent on viewers of the distribution only), the write rate
 * limit trusts CloudFront's report of the viewer's address (CloudFront-Viewer-Address) only on a
 * request that carries it (middleware/rate-limit.ts), and the cross-site check of cookie writes
 * trusts the viewer's host (VIEWER_HOST_HEADER) only then (middleware/auth.ts), since anyone may
 * send those headers to the HTTP API's own endpoint.
 *
 * The value: the table's SECRET#ORIGIN_VERIFY item, made at deploy time (functions/jobs/stored-secrets.ts)
 * and read by the functions whose STORED_SECRETS lists ORIGIN_VERIFY (store/secrets-repo.ts: once per
 * container, kept five minutes, like the instance secret). Not listed (the local runtime, which has
 * no edge): nothing to verify.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { Context } from 'aws-lambda';
import { RouteNotFoundError } from '../errors.js';
import { errorResult } from './error-envelope.js';
import { header } from './types.js';
import type { HttpEvent } from './types.js';
import { mayReadStoredSecret, requiredStoredSecret } from '../store/secrets-repo.js';

/** The custom origin header CloudFront adds (lower-case, as payload v2 delivers headers). */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/**
 * The Host the viewer addressed, copied by the distribution's CloudFront Function on /api/*
 * (lib/constructs/edge.ts), which replaces any value a client sent. Believed only with the
 * origin-verify secret (middleware/auth.ts fromOwnOrigin).
 */
export const VIEWER_HOST_HEADER = 'x-relay-viewer-host';

/** Whether an origin-verify secret is configured at all (a deployed stack's edge functions). */
export const edgeConfigured = (): boolean => mayReadStoredSecret('ORIGIN_VERIFY');

/** Whether the request carries the origin-verify secret (compared in constant time). */
export async function cameThroughEdge(event: HttpEvent): Promise<boolean> {
  if (!edgeConfigured()) return false;
  const given = header(event, ORIGIN_VERIFY_HEADER);
  if (!given) return false;
  // Fail closed: a missing item is a broken deployment, never a pass (edgeOnly answers 500).
  const expected = await requiredStoredSecret('ORIGIN_VERIFY');
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

type StreamingHandler = (event: HttpEvent, responseStream: Writable, context: Context) => Promise<void>;

interface ResponseStreamFactory {
  streamifyResponse: <T>(handler: T) => T;
  HttpResponseStream: { from: (stream: Writable, metadata: Record<string, unknown>) => Writable };
}

/**
 * A response-streaming handler that checks the origin-verify secret before anything else:
 * with a secret configured, a request without it gets the 404 envelope at once (no CORS, no
 * auth, no table read); otherwise `inner` runs as it would. Without a secret configured (the
 * local runtime) `inner` always runs.
 */
export function edgeOnly(inner: StreamingHandler): StreamingHandler {
  const lambda = (globalThis as unknown as { awslambda: ResponseStreamFactory }).awslambda;
  return lambda.streamifyResponse(async (event: HttpEvent, responseStream: Writable, context: Context) => {
    let verdict: unknown;
    try {
      if (!edgeConfigured() || (await cameThroughEdge(event))) verdict = 'pass';
      else verdict = new RouteNotFoundError();
    } catch (error) {
      verdict = error; // the secret could not be read: a logged 500 envelope
    }
    if (verdict === 'pass') return inner(event, responseStream, context);
    const { statusCode, headers, body } = errorResult(verdict);
    const out = lambda.HttpResponseStream.from(responseStream, { statusCode, headers });
    await new Promise<void>((done) => out.end(body, () => done()));
  });
}
