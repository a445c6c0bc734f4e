/**
 * The OpenAPI 3.1 document of the HTTP API (contract §14 item 31), built from the route table
 * and each handler's zod schemas (zod-openapi renders them with zod 4's JSON Schema support): its
 * inputs, and its answers from its `replies` (functions/model/replies.ts), plus the errors every
 * route of its kind answers in the envelope (§1.7), the events (events.ts) and the instance secret
 * as the security scheme (§1.11). Pure: the caller hands it the handlers' schemas (load.ts
 * imports them), so the function that serves the document bundles none of them.
 */
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject, ZodOpenApiResponsesObject } from 'zod-openapi';
import { SESSION_COOKIE } from '../../functions/core/sessions.js';
import { authClassOf, routes } from '../routes.js';
import type { RouteSpec } from '../routes.js';
import type { Replies } from '../../functions/model/replies.js';
import { Event, eventWebhooks } from './events.js';

/**
 * What document.ts reads from a handler module: its `schemas` (what the function validates, and
 * its `replies`: what it answers), and optionally `documented`: the shape the contract defines for inputs the schema accepts
 * loosely because the contract checks them as rules, after existence checks (§5.5.1), and the
 * request headers the handler reads itself (the event stream's `Last-Event-ID`).
 */
export interface HandlerSchemas {
  path?: z.core.$ZodType;
  query?: z.core.$ZodType;
  body?: z.core.$ZodType;
  replies?: Replies;
  documented?: { body?: z.core.$ZodType; header?: z.core.$ZodType };
}

export type OpenApiDocument = ReturnType<typeof createDocument>;

export const ErrorEnvelope = z
  .strictObject({
    error: z.strictObject({
      code: z.enum([
        'VALIDATION_ERROR',
        'UNAUTHORIZED',
        'FORBIDDEN',
        'NOT_FOUND',
        'CONFLICT',
        'PAYLOAD_TOO_LARGE',
        'UNSUPPORTED_MEDIA_TYPE',
        'RATE_LIMIT_ERROR',
        'INTERNAL_ERROR',
      ]),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).nullable(),
    }),
  })
  .meta({ id: 'ErrorEnvelope', description: 'Every error answer (contract §1.7).' });

/**
 * API Gateway's own 500, when the function fails before it answers or outlives its timeout: the
 * service never had the chance to answer the envelope (docs/divergences.md). The local runtime
 * answers the same.
 */
export const GatewayError = z.strictObject({ message: z.string() }).meta({
  id: 'GatewayError',
  description: "API Gateway's answer when the function fails or times out before it answers.",
});

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorEnvelope } },
});

/** The errors every route of a kind can answer (§5.0 "Errors common to every endpoint"). */
function errorsOf(route: RouteSpec, hasPathIds: boolean): ZodOpenApiResponsesObject {
  const auth = authClassOf(route);
  return {
    '400': errorResponse('VALIDATION_ERROR: schema (§1.8) or rule validation failed.'),
    ...(auth === 'public' ? {} : { '401': errorResponse('UNAUTHORIZED: the instance secret is missing or wrong.') }),
    ...(auth !== 'public' && route.writes
      ? { '403': errorResponse('FORBIDDEN: a write authenticated by the session cookie alone, from another origin.') }
      : {}),
    ...(hasPathIds ? { '404': errorResponse('NOT_FOUND: the addressed resource does not exist.') } : {}),
    ...(route.method === 'POST' || route.method === 'PATCH'
      ? { '409': errorResponse('CONFLICT: idempotency key reuse or in progress (§1.10), or a state conflict.') }
      : {}),
    ...(route.writes || route.table !== 'none'
      ? {
          '429': {
            ...errorResponse(
              route.writes
                ? 'RATE_LIMIT_ERROR: the write rate limit is exceeded (§1.12), or the resource is written by ' +
                    'too many others at once for this write to land in its time, or the table is too busy; ' +
                    'nothing was changed.'
                : 'RATE_LIMIT_ERROR: the table is too busy to answer this read in its time (DynamoDB throttled ' +
                    'it or did not answer); nothing was changed.',
            ),
            headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } },
          },
        }
      : {}),
    '500': {
      description:
        'INTERNAL_ERROR: an unexpected failure. A write may or may not have been applied: a retry with the same ' +
        "Idempotency-Key learns which. When the function itself fails or outlives its timeout, API Gateway's " +
        'own answer instead (GatewayError).',
      content: { 'application/json': { schema: z.union([ErrorEnvelope, GatewayError]) } },
    },
  };
}

/** Public: none; read: the secret or nothing (§1.11 read toggle); write: the secret. */
function securityOf(route: RouteSpec): Record<string, string[]>[] {
  const secret: Record<string, string[]>[] = [
    { instanceSecret: [] },
    { instanceSecretQuery: [] },
    { sessionCookie: [] },
  ];
  switch (authClassOf(route)) {
    case 'public':
      return [];
    case 'read':
      return [...secret, {}];
    case 'write':
      return secret;
  }
}

/**
 * The path parameters of this route's path only, each required: a handler shared by both path
 * forms (§5.4.3–5.4.5) has an optional `chatId` that only one of them carries.
 */
function pathParamsOf(route: RouteSpec, schema: z.core.$ZodType | undefined): z.ZodObject | undefined {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  if (names.length === 0) return undefined;
  // Read from the schema's definition: the handlers' schemas are zod/mini, not classic instances.
  const shape = schema?._zod.def.type === 'object' ? (schema._zod.def as z.core.$ZodObjectDef).shape : {};
  return z.object(
    Object.fromEntries(
      names.map((name) => {
        const param = shape[name] ?? z.string();
        const def = param._zod.def;
        return [name, def.type === 'optional' ? (def as z.core.$ZodOptionalDef).innerType : param];
      }),
    ),
  );
}

/** A route's own answers, from its module's `replies`; a preflight's is no operation of the document. */
function answersOf(route: RouteSpec, replies: Replies | undefined): ZodOpenApiResponsesObject {
  if (!replies) throw new Error(`Handler "${route.handler}" declares no replies (its module's \`schemas.replies\`).`);
  const answers: ZodOpenApiResponsesObject = {};
  for (const [status, reply] of Object.entries(replies)) {
    if ('preflight' in reply) continue;
    const key = status as '200';
    if ('failure' in reply) answers[key] = errorResponse(reply.description);
    else if ('body' in reply)
      answers[key] = { description: reply.description, content: { 'application/json': { schema: reply.body } } };
    else if ('bytes' in reply || 'stream' in reply) {
      const type = 'bytes' in reply ? reply.bytes : reply.stream;
      answers[key] = { description: reply.description, content: { [type]: { schema: { type: 'string' } } } };
    } else if ('redirect' in reply)
      answers[key] = {
        description: reply.description,
        headers: { Location: { required: true, schema: { type: 'string' }, description: reply.redirect } },
      };
    else answers[key] = { description: reply.description };
  }
  return answers;
}

function operationOf(route: RouteSpec, schemas: HandlerSchemas): ZodOpenApiOperationObject {
  const success = answersOf(route, schemas.replies);
  const body = schemas.documented?.body ?? schemas.body;
  const idempotent = (route.method === 'POST' || route.method === 'PATCH') && route.keyed !== false;
  const path = pathParamsOf(route, schemas.path);
  // Read from the schema's definition, as pathParamsOf does (the handlers' schemas are zod/mini).
  const headers: Record<string, z.core.$ZodType> = {
    ...(schemas.documented?.header?._zod.def as z.core.$ZodObjectDef | undefined)?.shape,
    ...(idempotent
      ? {
          'Idempotency-Key': z
            .string()
            .optional()
            .meta({ description: 'Replays the first answer for a repeated request (§1.10).' }),
        }
      : {}),
  };
  return {
    tags: [route.handler.split('/')[0]!],
    security: securityOf(route),
    requestParams: {
      ...(path ? { path } : {}),
      ...(schemas.query ? { query: schemas.query as z.ZodObject } : {}),
      ...(Object.keys(headers).length > 0 ? { header: z.object(headers) } : {}),
    },
    ...(body && route.method !== 'GET' ? { requestBody: { content: { 'application/json': { schema: body } } } } : {}),
    responses: { ...success, ...errorsOf(route, /\{\w+\}/.test(route.path)) },
  };
}

/**
 * The operation's id: its handler's name in camel case (`messages/chunk` → `messagesChunk`). A
 * handler served on a second path (the chat-scoped aliases of the streaming routes) gets that
 * path's scope as a suffix (`messagesChunkInChat`), so every id is unique, as OpenAPI requires
 * (code generators such as openapi-typescript refuse a document with duplicates).
 */
function operationIdOf(route: RouteSpec, table: readonly RouteSpec[]): string {
  const base = route.handler.replace(/[/-](\w)/g, (_, c: string) => c.toUpperCase());
  const first = table.find((r) => r.handler === route.handler);
  if (!first || first === route || first.path === route.path) return base;
  return route.path.includes('/chats/{chatId}/') ? `${base}InChat` : `${base}At${table.indexOf(route)}`;
}

/**
 * The document for `schemas` (handler name → its module's schemas). Throws when a route's
 * handler has no schemas or declares no replies, so a new route cannot go undocumented.
 */
export function buildOpenApiDocument(
  schemas: ReadonlyMap<string, HandlerSchemas>,
  version: string,
  table: readonly RouteSpec[] = routes,
): OpenApiDocument {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of table) {
    const handlerSchemas = schemas.get(route.handler);
    if (!handlerSchemas) throw new Error(`No schemas loaded for handler "${route.handler}".`);
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase() as 'get'] = {
      operationId: operationIdOf(route, table),
      ...operationOf(route, handlerSchemas),
    };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Chat relay HTTP API (OpenGram API v1)',
      version,
      description:
        'Chats, messages, interactive requests, media, dispatch, push and the event stream (server-sent events) for ' +
        'AI agents. Every error answers the ErrorEnvelope.',
    },
    paths,
    webhooks: eventWebhooks(),
    components: {
      schemas: { ErrorEnvelope, Event },
      securitySchemes: {
        instanceSecret: {
          type: 'http',
          scheme: 'bearer',
          description: 'The instance secret (§1.11): `Authorization: Bearer <secret>`.',
        },
        instanceSecretQuery: {
          type: 'apiKey',
          in: 'query',
          name: 'token',
          description: 'The instance secret as `?token=<secret>`, for clients that cannot send headers.',
        },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            'A browser session from POST /api/v1/auth/session (§1.11.1); a write it alone authenticates needs the ' +
            "service's own Origin.",
        },
      },
    },
  });
}
