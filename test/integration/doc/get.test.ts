import { describe, expect, it } from '@jest/globals';
import { Validator } from '@seriousme/openapi-schema-validator';
import { SESSION_COOKIE } from '../../../functions/core/sessions.js';
import { authClassOf, routes } from '../../../lib/routes.js';
import type { RouteSpec } from '../../../lib/routes.js';
import { useApi } from '../../support/api.js';

const api = useApi({
  config: {
    security: { instanceSecretEnabled: true, instanceSecret: 'sekrit', readEndpointsRequireInstanceSecret: true },
  },
});

type Operation = {
  security: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema?: Record<string, unknown> }[];
  requestBody?: { content: Record<string, { schema: Record<string, any> }> };
  responses: Record<string, { description?: string; content?: Record<string, { schema: Record<string, any> }> }>;
};
type Document = {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, any>; securitySchemes: Record<string, any> };
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const operationsOf = (doc: Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );
const operation = (doc: Document, method: string, path: string): Operation => doc.paths[path]![method]!;

async function fetchDocument(): Promise<Document> {
  const res = await api.get<Document>('/api/v1/doc');
  expect(res.status).toBe(200);
  return res.body;
}

describe('GET /api/v1/doc', () => {
  it('answers the JSON document without the secret, even when reads require it (public, §14 item 31)', async () => {
    const res = await api.get('/api/v1/doc');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('0.1.0');
  });

  it('lists exactly the routes of the route table, each path with its methods', async () => {
    const doc = await fetchDocument();
    const expected = routes.map((r) => `${r.method} ${r.path}`).sort();
    expect(operationsOf(doc).sort()).toEqual(expected);
  });

  it('validates as OpenAPI 3.1, with every $ref resolving', async () => {
    const validator = new Validator();
    const result = await validator.validate(await fetchDocument());
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it('is checked by a validator that rejects a broken document (a response without its description)', async () => {
    const doc = await fetchDocument();
    delete (operation(doc, 'get', '/api/v1/health').responses['200'] as Record<string, unknown>).description;
    const result = await new Validator().validate(doc);
    expect(result.valid).toBe(false);
  });

  it('declares the instance secret as bearer and ?token= schemes and the session cookie, per auth class', async () => {
    const doc = await fetchDocument();
    expect(doc.components.securitySchemes).toEqual({
      instanceSecret: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      instanceSecretQuery: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'token' }),
      sessionCookie: expect.objectContaining({ type: 'apiKey', in: 'cookie', name: SESSION_COOKIE }),
    });
    const secret = [{ instanceSecret: [] }, { instanceSecretQuery: [] }, { sessionCookie: [] }];
    for (const route of routes) {
      const { security } = operation(doc, route.method.toLowerCase(), route.path);
      const expected = { public: [], read: [...secret, {}], write: secret }[authClassOf(route)];
      expect([route.path, security]).toEqual([route.path, expected]);
    }
  });

  it('answers every error with the envelope of §1.7 (a 500 also as API Gateway’s own) but a range beyond the file, and 401/429 where the auth class and table use apply', async () => {
    const doc = await fetchDocument();
    expect(doc.components.schemas.ErrorEnvelope).toMatchObject({
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          required: ['code', 'message', 'details'],
          properties: { code: { enum: expect.arrayContaining(['VALIDATION_ERROR', 'RATE_LIMIT_ERROR']) } },
        },
      },
    });
    const bodiless: string[] = [];
    for (const route of routes) {
      const { responses } = operation(doc, route.method.toLowerCase(), route.path);
      const errors = Object.keys(responses).filter((status) => Number(status) >= 400);
      for (const status of errors) {
        if (!responses[status]!.content) {
          bodiless.push(`${route.method} ${route.path} ${status}`);
          continue;
        }
        const schema = responses[status]!.content!['application/json']!.schema;
        // A 500 may also be API Gateway's own answer, when the function fails or times out.
        expect([
          route.path,
          status,
          status === '500' ? schema.anyOf.map((s: { $ref: string }) => s.$ref) : schema.$ref,
        ]).toEqual([
          route.path,
          status,
          status === '500'
            ? ['#/components/schemas/ErrorEnvelope', '#/components/schemas/GatewayError']
            : '#/components/schemas/ErrorEnvelope',
        ]);
      }
      // The sign-in is public, and answers a wrong secret 401 (§1.11.1).
      expect([route.path, errors.includes('401')]).toEqual([
        route.path,
        authClassOf(route) !== 'public' || route.handler === 'auth/sign-in',
      ]);
      // Any route that reads or writes the table: a write's rate limit or busy resource, a read the table could not answer in time.
      expect([route.path, errors.includes('429')]).toEqual([
        route.path,
        route.writes || (route as RouteSpec).table !== 'none',
      ]);
      // A cookie-authenticated write from another origin (§1.11.1).
      const cookieWrite = route.writes && authClassOf(route) !== 'public';
      expect([route.path, errors.includes('403')]).toEqual([route.path, cookieWrite]);
      expect([route.path, errors.includes('500')]).toEqual([route.path, true]);
    }
    // The one 4xx without a body: a Range that starts beyond the file (§5.6.5), answered as S3 does.
    expect(bodiless).toEqual(['GET /api/v1/files/{mediaId} 416']);
  });

  it('describes path and query parameters from the handlers’ schemas', async () => {
    const doc = await fetchDocument();
    for (const route of routes) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const params = operation(doc, route.method.toLowerCase(), route.path).parameters ?? [];
      expect([route.path, params.filter((p) => p.in === 'path').map((p) => p.name)]).toEqual([route.path, names]);
    }
    const listChats = operation(doc, 'get', '/api/v1/chats').parameters!.filter((p) => p.in === 'query');
    expect(listChats.map((p) => p.name)).toEqual(expect.arrayContaining(['cursor', 'limit', 'archived', 'tag']));
  });

  it('describes the event stream (§5.9, §6.4): query, Last-Event-ID, a text/event-stream 200, 401, the secret', async () => {
    const doc = await fetchDocument();
    const stream = operation(doc, 'get', '/api/v1/events/stream');
    expect(Object.keys(doc.paths['/api/v1/events/stream']!)).toEqual(['get']);
    const params = stream.parameters ?? [];
    const query = params.filter((p) => p.in === 'query');
    expect(query.map((p) => p.name)).toEqual(['cursor', 'ephemeral', 'limit', 'token']);
    expect(query.filter((p) => p.required)).toEqual([]);
    expect(query.find((p) => p.name === 'ephemeral')!.schema).toMatchObject({ enum: ['true', 'false'] });
    expect(params.filter((p) => p.in === 'header').map((p) => p.name)).toEqual(['Last-Event-ID']);
    expect(Object.keys(stream.responses).sort()).toEqual(['200', '400', '401', '429', '500']);
    expect(Object.keys(stream.responses['200']!.content!)).toEqual(['text/event-stream']);
    expect(stream.responses['200']!.description).toMatch(/event: <type>/);
    expect(stream.responses['401']!.content!['application/json']!.schema.$ref).toBe(
      '#/components/schemas/ErrorEnvelope',
    );
    // Always the secret when it is on, whatever the read toggle (§1.11): no anonymous alternative.
    expect(stream.security).toEqual([{ instanceSecret: [] }, { instanceSecretQuery: [] }, { sessionCookie: [] }]);
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
  });

  it('gives the request routes real body shapes (type, config per type, resolution), not empty schemas', async () => {
    const doc = await fetchDocument();
    const body = (method: string, path: string) =>
      operation(doc, method, path).requestBody!.content['application/json']!.schema;
    const create = body('post', '/api/v1/chats/{chatId}/requests');
    expect(create.required).toEqual(expect.arrayContaining(['type', 'title', 'config']));
    expect(create.properties.type.enum).toEqual(['choice', 'text_input', 'form']);
    expect(JSON.stringify(create.properties.config)).toContain('ChoiceConfig');
    expect(doc.components.schemas.FormConfig.properties.fields.items.properties.type.enum).toContain('multiselect');
    expect(body('patch', '/api/v1/requests/{requestId}').properties.title).toMatchObject({ type: 'string' });
    const resolve = body('post', '/api/v1/requests/{requestId}/resolve');
    expect(resolve.properties.selectedOptionIds).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(resolve.properties.resolvedBy.enum).toEqual(['user', 'backend']);
    expect(body('post', '/api/v1/messages/{messageId}/chunks').properties.deltaText).toMatchObject({ type: 'string' });
    // modelId is optional since 2026-11 (§5.3.1).
    const chat = body('post', '/api/v1/chats');
    expect(chat.required).toEqual(['agentIds']);
    expect(chat.properties.modelId).toMatchObject({ type: 'string' });
  });

  it('gives the resources their contract fields as response shapes (Chat on create, a page on list)', async () => {
    const doc = await fetchDocument();
    const created = operation(doc, 'post', '/api/v1/chats').responses['201']!.content!['application/json']!.schema;
    expect(created.$ref).toBe('#/components/schemas/Chat');
    expect(Object.keys(doc.components.schemas.Chat.properties)).toContain('pending_requests_count');
    expect(doc.components.schemas.Chat.required).toHaveLength(17);
    expect(Object.keys(doc.components.schemas.Message.properties)).toContain('stream_state');
    const typing = operation(doc, 'post', '/api/v1/chats/{chatId}/typing').responses;
    expect(typing['204']).toBeDefined();
    expect(typing['204']!.content).toBeUndefined();
  });

  it('names the auto-rename providers (§10.3): the validate body and the configuration list them as an enum', async () => {
    const doc = await fetchDocument();
    const providers = ['anthropic', 'openai', 'google', 'xai', 'openrouter'];
    const validate = operation(doc, 'post', '/api/v1/config/admin/validate-auto-rename').requestBody!.content[
      'application/json'
    ]!.schema;
    expect(validate.properties.provider.enum).toEqual(providers);
    expect(validate.required).toEqual(['provider', 'modelId']);
    const listed = doc.components.schemas.Config.properties.autoRenameProviders.items;
    expect(listed.properties.id.enum).toEqual(providers);
    expect(listed.required).toEqual(['id', 'name', 'envVar', 'hasEnvKey', 'cheapModels']);
  });
});
