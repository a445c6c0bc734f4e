import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { MiddlewareObj, Request } from '@middy/core';
import type { Deadline } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { HeldKey } from '../store/idempotency-repo.js';

export type HttpEvent = APIGatewayProxyEventV2;
export interface HttpResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
  /** `Set-Cookie` values, one per cookie (API Gateway's payload v2 `cookies`; the local server sends each). */
  cookies?: string[];
}
export type HttpMiddleware = MiddlewareObj<HttpEvent, HttpResult, Error, Context>;
export type HttpRequest = Request<HttpEvent, HttpResult, Error, Context>;

/** What the middlewares learn about a request, shared through middy's request.internal. */
export interface RequestState {
  requestId: string;
  /** When the chain started (ms since the epoch), for the request line. */
  started: number;
  /** The same moment on the monotonic clock (performance.now()), for sub-millisecond durations. */
  startedPerf: number;
  /** The process's CPU usage at the start, when the usage headers are on (the benchmark). */
  startedCpu?: NodeJS.CpuUsage;
  /** Requests in the process's chains when this one began, itself included (the same condition). */
  inFlightAtStart?: number;
  config: InstanceConfig;
  /** When the function ends (middleware/http.ts, as the invocation starts): the handler's `deadline`. */
  deadline: Deadline;
  /** Validated path, query and body (zod outputs). */
  input: { path: unknown; query: unknown; body: unknown };
  /** The Idempotency-Key this request reserved (idempotency): its handler may store the reply with its effect. */
  held?: HeldKey;
  /** A stored response to replay instead of running the handler (idempotency). */
  replay?: HttpResult;
  /** The handler's answer changed nothing (an empty claim): never stored for replay. */
  forget?: boolean;
}

/** Keyed by the invocation's event object, so the final handler can read it too. */
const states = new WeakMap<HttpEvent, RequestState>();

export function stateOf(request: HttpRequest | { event: HttpEvent }): RequestState {
  let state = states.get(request.event);
  if (!state) {
    state = { input: { path: {}, query: {}, body: {} } } as RequestState;
    states.set(request.event, state);
  }
  return state;
}

/** Lower-cased header lookup (payload v2 headers are already lower-case; be safe anyway). */
export function header(event: HttpEvent, name: string): string | undefined {
  const headers = event.headers ?? {};
  return headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
}

/**
 * Headers of every JSON answer of the API, errors included: a browser never reads one as
 * another type, and no cache (a browser's, a proxy's) keeps one, since most carry a person's
 * chats and some answer a secret or a session cookie.
 */
export const API_JSON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

export function jsonResult(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  if (statusCode === 204 || body === undefined)
    return { statusCode, headers: { ...API_JSON_HEADERS, ...headers }, body: '' };
  return {
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8', ...API_JSON_HEADERS, ...headers },
    body: JSON.stringify(body),
  };
}
