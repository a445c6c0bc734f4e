/**
 * The one factory every HTTP handler is built with. It looks the route up in the route
 * table (so method, auth class and write-ness are never restated in a handler) and composes
 * the middlewares in the contract's order (§1.14):
 *   request context → CORS → auth → rate limit (writes) → parse + validate → idempotency
 *   (POST/PATCH) → handler, with the error envelope answering any failure.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import { authClassOf, routes } from '../../lib/routes.js';
import type { AuthClass, HttpMethod } from '../../lib/routes.js';
import { clientGoneSignal } from '../platform/client-gone.js';
import { env } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { withUsage } from '../platform/usage.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { authenticate } from './auth.js';
import { cors } from './cors.js';
import { errorEnvelope } from './error-envelope.js';
import { idempotency } from './idempotency.js';
import { rateLimit } from './rate-limit.js';
import { requestContext } from './request-context.js';
import type { HttpEvent, HttpMiddleware, HttpResult } from './types.js';
import { jsonResult, stateOf } from './types.js';
import { validate } from './validate.js';
import type { InputSchemas } from './validate.js';

type Out<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

export interface HttpInput<S extends InputSchemas> {
  path: Out<S['path']>;
  query: Out<S['query']>;
  body: Out<S['body']>;
  config: InstanceConfig;
  event: HttpEvent;
  requestId: string;
  /** Aborts when the client went away, where the platform can tell (platform/client-gone.ts). */
  clientGone: AbortSignal | undefined;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** false: this answer changed nothing, so an Idempotency-Key must not replay it (§14 item 5). */
  remember?: false;
  /** Raw bytes instead of a JSON body (file downloads); `headers` carry their type. */
  binary?: Buffer;
}

export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

interface RouteShape {
  method: HttpMethod | 'ANY';
  writes: boolean;
  auth: AuthClass;
}

function shapeOf(handlerName: string): RouteShape {
  const route = routes.find((r) => r.handler === handlerName);
  if (!route) throw new Error(`No route in lib/routes.ts uses handler "${handlerName}".`);
  return { method: route.method, writes: route.writes, auth: authClassOf(route) };
}

/**
 * Builds a Lambda handler. `route` is the handler's name in the route table (or an explicit
 * shape for the catch-all route); `schemas` are its zod inputs.
 */
export function http<S extends InputSchemas>(
  route: string | RouteShape,
  schemas: S,
  fn: (input: HttpInput<S>) => Promise<Reply>,
): HttpHandler {
  const shape = typeof route === 'string' ? shapeOf(route) : route;
  const chain: HttpMiddleware[] = [
    requestContext(),
    cors(),
    authenticate(shape.auth),
    ...(shape.writes ? [rateLimit()] : []),
    validate(schemas),
    ...(shape.method === 'POST' || shape.method === 'PATCH' ? [idempotency()] : []),
    errorEnvelope(),
  ];
  const pipeline = middy<HttpEvent, HttpResult>({ timeoutEarlyInMillis: 0 })
    .use(chain)
    .handler(async (event: HttpEvent, context: Context) => {
      const state = stateOf({ event });
      if (state.replay) return state.replay;
      const { path, query, body } = state.input;
      const reply = await fn({
        path: path as Out<S['path']>,
        query: query as Out<S['query']>,
        body: body as Out<S['body']>,
        config: state.config,
        event,
        requestId: state.requestId,
        clientGone: clientGoneSignal(context),
      });
      if (reply.remember === false) state.forget = true;
      if (reply.binary)
        return {
          statusCode: reply.status,
          headers: reply.headers ?? {},
          body: reply.binary.toString('base64'),
          isBase64Encoded: true,
        };
      return jsonResult(reply.status, reply.body, reply.headers);
    });

  return async (event, context) => {
    const started = Date.now();
    const { usage, result } = withUsage(() => pipeline(event, context));
    const response = await result;
    logger.info('request', { status: response.statusCode, ms: Date.now() - started, ddb: usage });
    if (env().EXPOSE_USAGE_HEADERS === '1') {
      response.headers = {
        ...response.headers,
        'x-ddb-calls': String(usage.calls),
        'x-ddb-rcu': usage.readUnits.toFixed(2),
        'x-ddb-wcu': usage.writeUnits.toFixed(2),
      };
    }
    return response;
  };
}
