/**
 * The one factory every HTTP handler is built with, the event stream's included. It looks the
 * route up in the route table (so method, auth class and write-ness are never restated in a
 * handler) and composes the middlewares in the contract's order (§1.14):
 *   logger context (Powertools, keys reset after each request) → request context (the live
 *   configuration, or without a storage call the last known one) and the request line → CORS → auth → rate limit (writes) → parse + validate → idempotency
 *   (POST/PATCH) → handler, with the error envelope answering any failure.
 * `streaming: true` builds a Lambda response-streaming handler (middy's streamify execution
 * mode) from the same chain: the handler's reply carries a Readable that becomes the body.
 */
import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import type { Readable, Writable } from 'node:stream';
import type * as z from '../platform/zod.js';
import { authClassOf, routes } from '../../lib/routes.js';
import type { AuthClass, HttpMethod, RouteSpec } from '../../lib/routes.js';
import { clientGoneSignal } from '../platform/client-gone.js';
import { logger } from '../platform/logger.js';
import { NO_DEADLINE, deadlineIn } from '../platform/deadline.js';
import type { Deadline } from '../platform/deadline.js';
import { startInvocation } from '../platform/invocation.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import type { BytesReply, FailureReply, JsonReply, Replies, StreamReply } from '../model/replies.js';
import { authenticate } from './auth.js';
import { cors } from './cors.js';
import { errorEnvelope } from './error-envelope.js';
import { idempotency } from './idempotency.js';
import { rateLimit } from './rate-limit.js';
import { requestContext } from './request-context.js';
import type { HttpEvent, HttpMiddleware, HttpResult } from './types.js';
import { compression } from './compression.js';
import { jsonResult, stateOf } from './types.js';
import { validate } from './validate.js';
import type { InputSchemas } from './validate.js';

type Out<S> = S extends z.core.$ZodType ? z.output<S> : Record<string, never>;
/** The body: its schema's output, or what the route's own reader returns (InputSchemas.readBody). */
type BodyOut<S extends InputSchemas> = S['body'] extends z.core.$ZodType
  ? z.output<S['body']>
  : S['readBody'] extends (...args: never[]) => Promise<infer B>
    ? B
    : Record<string, never>;

/** A route's inputs and its answers (model/replies.ts), as its module exports them as `schemas`. */
export interface RouteSchemas extends InputSchemas {
  replies: Replies;
}

export interface HttpInput<S extends InputSchemas> {
  path: Out<S['path']>;
  query: Out<S['query']>;
  body: BodyOut<S>;
  config: InstanceConfig;
  event: HttpEvent;
  requestId: string;
  /** Aborts when the client went away, where the platform can tell (platform/client-gone.ts). */
  clientGone: AbortSignal | undefined;
  /**
   * The request's Idempotency-Key and how the service's result becomes its reply, when it holds
   * one and the route declares its `committedReply`: the handler passes it to its service, whose
   * business transaction stores the reply with the effect (store/idempotency-repo.ts
   * completionInTransaction). Otherwise undefined, and the idempotency middleware stores the
   * reply after the handler.
   */
  keyed: KeyedReply | undefined;
  /**
   * When the function ends (the context's getRemainingTimeInMillis as the invocation started;
   * NO_DEADLINE for the event stream, which ends itself): the handler passes it to its service
   * beside `keyed`, and the service to the writes that plan with it (platform/deadline.ts).
   */
  deadline: Deadline;
}

/** What the middleware makes of a handler's answer (an `AnswerOf` its replies allow). */
interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** false: this answer changed nothing, so an Idempotency-Key must not replay it (§14 item 5). */
  remember?: false;
  /** Raw bytes instead of a JSON body (file downloads); `headers` carry their type. */
  binary?: Buffer;
  /** The body as a stream (streaming handlers only): sent as it is written. */
  stream?: Readable;
  /** `Set-Cookie` values, one per cookie (a header can carry only one). */
  cookies?: string[];
}

type AnswerExtras = Pick<Reply, 'headers' | 'remember' | 'cookies'>;
/** A body as the middleware uses it, serialized and never changed: a readonly array or object serves as well. */
type Sent<T> = T extends readonly (infer U)[]
  ? readonly Sent<U>[]
  : T extends object
    ? { readonly [K in keyof T]: Sent<T[K]> }
    : T;
/** The answer one declared reply allows: its status, and the body its kind carries (none for the others). */
type AnswerFor<K, D> = D extends FailureReply
  ? never
  : D extends JsonReply<infer B>
    ? AnswerExtras & { status: K; body: Sent<z.output<B>>; binary?: never; stream?: never }
    : D extends BytesReply
      ? AnswerExtras & { status: K; binary: Buffer; body?: never; stream?: never }
      : D extends StreamReply
        ? AnswerExtras & { status: K; stream: Readable; body?: never; binary?: never }
        : AnswerExtras & { status: K; body?: never; binary?: never; stream?: never };
/**
 * What a handler may return, by its declared replies: a status it does not declare, or a body
 * of another shape than its reply's schema, fails the typecheck. Typing only: nothing checks the
 * reply at run time (the integration suite checks every answer against the document).
 */
export type AnswerOf<R extends Replies> = { [K in keyof R]: K extends number ? AnswerFor<K, R[K]> : never }[keyof R];

export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;
/** A Lambda response-streaming handler (`awslambda.streamifyResponse`). */
export type StreamingHttpHandler = (event: HttpEvent, responseStream: Writable, context: Context) => Promise<void>;

export interface RouteShape {
  method: HttpMethod | 'ANY';
  writes: boolean;
  auth: AuthClass;
  /** "METHOD /path" for the logs (the event's own routeKey when absent: the catch-all). */
  routeKey?: string;
  /** false: no Idempotency-Key handling (lib/routes.ts `keyed`). */
  keyed?: false;
  /** false: the route makes no storage call, the configuration's included (lib/routes.ts `table: 'none'`). */
  storage?: boolean;
  /** The body is written as it goes (lib/routes.ts `streaming`: the event stream). */
  streaming?: boolean;
}

function shapeOf(handlerName: string): RouteShape {
  const route = routes.find((r) => r.handler === handlerName);
  if (!route) throw new Error(`No route in lib/routes.ts uses handler "${handlerName}".`);
  return {
    method: route.method,
    writes: route.writes,
    auth: authClassOf(route),
    routeKey: `${route.method} ${route.path}`,
    ...('keyed' in route && route.keyed === false ? { keyed: false as const } : {}),
    storage: (route as RouteSpec).table !== 'none',
    streaming: (route as RouteSpec).streaming === true,
  };
}

function resultOf(reply: Reply): HttpResult {
  const result = bodyOf(reply);
  if (reply.cookies?.length) result.cookies = reply.cookies;
  return result;
}

function bodyOf(reply: Reply): HttpResult {
  if (reply.binary) {
    const body = reply.binary.toString('base64');
    return { statusCode: reply.status, headers: reply.headers ?? {}, body, isBase64Encoded: true };
  }
  if (reply.stream) {
    // middy's streaming mode pipes a Readable body into the response stream.
    return { statusCode: reply.status, headers: reply.headers ?? {}, body: reply.stream as unknown as string };
  }
  return jsonResult(reply.status, reply.body, reply.headers);
}

/**
 * The handler. Its answer is a `const` type parameter of http() checked against the declared
 * replies: a callback's return is not contextually typed by a generic route's replies, so
 * `status: 200` would otherwise widen to `number` before the check.
 */
type HttpFn<S extends RouteSchemas, A> = (input: HttpInput<S>) => Promise<A>;

export interface HttpOptions<S extends RouteSchemas = RouteSchemas> {
  streaming?: boolean;
  /**
   * The route's success reply, declared so that the service's business transaction can store it
   * with the Idempotency-Key (the handler's `keyed`, store/idempotency-repo.ts
   * completionInTransaction): `status`, and
   * `body` when it does not depend on the service's result (otherwise the result is the body).
   * The handler must answer exactly that on success; if it does not, the key is completed again
   * after the handler with what it answered.
   */
  committedReply?: { status: keyof S['replies'] & number; body?: unknown };
  /**
   * Work the first attempt does after its commit, redone when a success is replayed for its
   * Idempotency-Key: a client retries because it got no answer, and a crash between the commit
   * and that work (the dispatch signal of a new input) would otherwise leave it to the sweeper,
   * about a minute later. It must be idempotent (the first attempt may well have done it) and
   * must not throw: the replay answers regardless.
   */
  afterReplay?: (replayed: ReplayedInput<S>) => Promise<void>;
}

/** What `afterReplay` is given: the request's input and the replayed success body. */
export interface ReplayedInput<S extends RouteSchemas> {
  path: Out<S['path']>;
  body: BodyOut<S>;
  config: InstanceConfig;
  reply: unknown;
  /** The replaying request's deadline: what is redone plans its writes with it. */
  deadline: Deadline;
}

/**
 * Builds a Lambda handler. `route` is the handler's name in the route table (or an explicit
 * shape for the catch-all route); `schemas` are its zod inputs and its `replies`, which type what
 * `fn` returns.
 */
export function http<S extends RouteSchemas, const A extends AnswerOf<S['replies']>>(
  route: string | RouteShape,
  schemas: S,
  fn: HttpFn<S, A>,
  options?: HttpOptions<S> & { streaming?: false },
): HttpHandler;
export function http<S extends RouteSchemas, const A extends AnswerOf<S['replies']>>(
  route: string | RouteShape,
  schemas: S,
  fn: HttpFn<S, A>,
  options: HttpOptions<S> & { streaming: true },
): StreamingHttpHandler;
export function http<S extends RouteSchemas, const A extends AnswerOf<S['replies']>>(
  route: string | RouteShape,
  schemas: S,
  fn: HttpFn<S, A>,
  options: HttpOptions<S> = {},
): HttpHandler | StreamingHttpHandler {
  const shape = typeof route === 'string' ? shapeOf(route) : route;
  // The route table says which route streams; the handler's option only picks the Lambda signature.
  if (Boolean(shape.streaming) !== Boolean(options.streaming)) {
    throw new Error(
      `lib/routes.ts marks ${shape.routeKey ?? 'this route'} as ${shape.streaming ? '' : 'not '}streaming: ` +
        `build its handler ${shape.streaming ? 'with' : 'without'} http(..., { streaming: true }).`,
    );
  }
  const chain: HttpMiddleware[] = [
    injectLambdaContext(logger, { resetKeys: true }),
    requestContext(shape.routeKey, shape.storage),
    ...(shape.streaming ? [] : [compression()]),
    cors(),
    authenticate(shape.auth),
    ...(shape.writes ? [rateLimit()] : []),
    validate(schemas),
    ...((shape.method === 'POST' || shape.method === 'PATCH') && shape.keyed !== false ? [idempotency()] : []),
    errorEnvelope(),
  ];
  const pipeline = middy<HttpEvent, HttpResult>({
    timeoutEarlyInMillis: 0,
    // Before the chain: the request's deadline (the event stream, which ends itself, has none),
    // handed to the handler as `deadline`, and the invocation's record, so that every SDK call of
    // the request is counted and waited for only until then (platform/invocation.ts).
    requestStart: (request: { event: unknown; context?: Partial<Context> }) => {
      const deadline = options.streaming ? NO_DEADLINE : deadlineIn(request.context?.getRemainingTimeInMillis?.());
      stateOf({ event: request.event as HttpEvent }).deadline = deadline;
      startInvocation(deadline);
    },
    ...(options.streaming ? { executionMode: executionModeStreamifyResponse } : {}),
  })
    .use(chain)
    .handler(async (event: HttpEvent, context: Context) => {
      const state = stateOf({ event });
      const { path, query, body } = state.input;
      if (state.replay) {
        const { statusCode, body: replayed } = state.replay;
        if (options.afterReplay && statusCode < 300) {
          await options.afterReplay({
            path: path as Out<S['path']>,
            body: body as BodyOut<S>,
            config: state.config,
            reply: replayed ? JSON.parse(replayed) : undefined,
            deadline: state.deadline,
          });
        }
        return state.replay;
      }
      const declared = options.committedReply;
      const keyed: KeyedReply | undefined =
        state.held && declared
          ? {
              held: state.held,
              replyOf: (result) => {
                const { statusCode, body: text } = jsonResult(declared.status, declared.body ?? result);
                return { statusCode, body: text };
              },
            }
          : undefined;
      const reply: Reply = await fn({
        path: path as Out<S['path']>,
        query: query as Out<S['query']>,
        body: body as BodyOut<S>,
        config: state.config,
        event,
        requestId: state.requestId,
        clientGone: clientGoneSignal(context),
        keyed,
        deadline: state.deadline,
      });
      if (reply.remember === false) state.forget = true;
      return resultOf(reply);
    });
  // In streaming mode middy hands Lambda (event, responseStream, context), not (event, context).
  return options.streaming ? (pipeline as unknown as StreamingHttpHandler) : pipeline;
}
