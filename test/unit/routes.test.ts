import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { http } from '../../functions/middleware/http.js';
import { noContent } from '../../functions/model/replies.js';
import { API_AREAS, apiAreaOf, apiRoutes, authClassOf, routeId, routes, streamRoute } from '../../lib/routes.js';
import { installAwsLambdaGlobal } from '../../local/stream-adapter.js';
import type { RouteSpec } from '../../lib/routes.js';

/**
 * The contract's endpoint index (§5.0), as committed in test/fixtures (CI clones the project
 * alone, without ../shared). When the team's contract sits beside the project, the copy must
 * still match it.
 */
const SNAPSHOT = new URL('../fixtures/contract-endpoint-index.md', import.meta.url);
const SHARED_CONTRACT = new URL('../../../shared/CONTRACT.md', import.meta.url);

function sharedIndex(): string | undefined {
  if (!existsSync(SHARED_CONTRACT)) return undefined;
  const text = readFileSync(SHARED_CONTRACT, 'utf8');
  return text.slice(text.indexOf('### 5.0 Endpoint index'), text.indexOf('### 5.1 '));
}

/** `METHOD /path` → auth class; a row may list several paths (`/doc`, `/reference`). */
function contractEndpoints(): Map<string, string> {
  const section = readFileSync(SNAPSHOT, 'utf8');
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| (GET|POST|PATCH|PUT|DELETE) \| ((?:`[^`]+`(?:, )?)+) \| ([a-z ]+) \|/gm)) {
    for (const path of match[2]!.matchAll(/`([^`]+)`/g)) rows.set(`${match[1]} /api/v1${path[1]}`, match[3]!.trim());
  }
  return rows;
}

/**
 * The contract's classes as the route table spells them: the event stream's class (§1.11: the
 * secret whenever it is on, whatever the read toggle) is the write class's rule.
 */
const tableClassOf = (contractClass: string | undefined) =>
  contractClass === 'event stream' ? 'write' : contractClass;

/**
 * Routes beyond the contract's index, each a deliberate extension documented in docs/divergences.md: the
 * upload session of files larger than one request carries (docs/architecture.md "Large files"), and the browser
 * sessions of §1.11.1 (docs/web-app.md "Browser sessions").
 */
const EXTENSIONS = new Map([
  ['POST /api/v1/chats/{chatId}/media/uploads', 'write'],
  ['POST /api/v1/chats/{chatId}/media/uploads/{uploadId}/complete', 'write'],
  ['POST /api/v1/auth/session', 'public'],
  ['DELETE /api/v1/auth/session', 'public'],
  ['DELETE /api/v1/auth/sessions', 'write'],
  // §5.5.6: the approvals list and the decision log.
  ['GET /api/v1/requests', 'read'],
  ['GET /api/v1/decisions', 'read'],
]);

describe('route table', () => {
  const endpoints = contractEndpoints();

  it('reads the contract index', () => {
    expect(endpoints.size).toBeGreaterThan(40);
  });

  it('keeps its copy of the index equal to the shared contract when that is present', () => {
    const shared = sharedIndex();
    if (shared !== undefined) expect(readFileSync(SNAPSHOT, 'utf8')).toBe(shared);
    else expect(existsSync(SNAPSHOT)).toBe(true);
  });

  it('lists only endpoints of the contract (each with the contract auth class) and the named extensions', () => {
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      const expected = tableClassOf(endpoints.get(key)) ?? EXTENSIONS.get(key);
      expect([key, expected !== undefined]).toEqual([key, true]);
      expect([key, authClassOf(route)]).toEqual([key, expected]);
    }
    for (const key of EXTENSIONS.keys()) expect([key, endpoints.has(key)]).toEqual([key, false]);
  });

  it('lists every endpoint of the contract, the event stream included', () => {
    const listed = new Set(routes.map((r) => `${r.method} ${r.path}`));
    for (const key of endpoints.keys()) expect([key, listed.has(key)]).toEqual([key, true]);
  });

  it('marks the event stream, and only it, as streaming (a function URL, not an API Gateway route)', () => {
    const streaming = (routes as readonly RouteSpec[]).filter((r) => r.streaming);
    expect(streaming.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v1/events/stream']);
    expect(streamRoute).toBe(streaming[0]);
    expect(endpoints.get('GET /api/v1/events/stream')).toBe('event stream');
    expect([authClassOf(streamRoute), streamRoute.writes]).toEqual(['write', false]);
    expect(apiRoutes).toEqual((routes as readonly RouteSpec[]).filter((r) => r !== streamRoute));
  });

  it('builds a handler in streaming mode exactly where the table marks the route streaming', () => {
    // A streaming handler calls Lambda's awslambda.streamifyResponse as it is built.
    installAwsLambdaGlobal();
    const reply = async () => ({ status: 204 }) as const;
    const schemas = { replies: { 204: noContent('Nothing.') } };
    expect(() => http('events/stream', schemas, reply)).toThrow('marks GET /api/v1/events/stream as streaming');
    expect(() => http('chats/get', schemas, reply, { streaming: true })).toThrow(
      'marks GET /api/v1/chats/{chatId} as not streaming',
    );
    expect(() => http('events/stream', schemas, reply, { streaming: true })).not.toThrow();
    expect(() => http('chats/get', schemas, reply)).not.toThrow();
  });

  it('has unique routes and construct ids', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(routes.map(routeId)).size).toBe(routes.length);
  });

  it('shares a handler only between routes of one method and auth class (both path forms of §5.4.3–5.4.5)', () => {
    for (const route of routes) {
      const first = routes.find((r) => r.handler === route.handler)!;
      expect([route.path, route.method, authClassOf(route)]).toEqual([route.path, first.method, authClassOf(first)]);
    }
  });

  it('marks exactly the non-GET routes as writes', () => {
    for (const route of routes) expect([route.path, route.writes]).toEqual([route.path, route.method !== 'GET']);
  });
});

describe('API areas (the nested stack each route function lands in, lib/constructs/api-area.ts)', () => {
  it('puts every API route in an area, the chat-scoped paths with their kind', () => {
    const byArea = (area: string) =>
      apiRoutes
        .filter((r) => apiAreaOf(r) === area)
        .map((r) => `${r.method} ${r.path}`)
        .sort();
    for (const route of apiRoutes) expect(API_AREAS).toContain(apiAreaOf(route));
    expect(apiAreaOf({ path: '/api/v1/chats' })).toBe('chats');
    expect(apiAreaOf({ path: '/api/v1/chats/{chatId}/archive' })).toBe('chats');
    expect(apiAreaOf({ path: '/api/v1/chats/{chatId}/messages/{messageId}/chunks' })).toBe('messages');
    expect(apiAreaOf({ path: '/api/v1/chats/{chatId}/requests' })).toBe('requests');
    expect(apiAreaOf({ path: '/api/v1/chats/{chatId}/media/uploads' })).toBe('media');
    expect(apiAreaOf({ path: '/api/v1/files/{mediaId}' })).toBe('media');
    expect(apiAreaOf({ path: '/api/v1/dispatch/claim' })).toBe('dispatch');
    expect(byArea('admin')).toEqual(
      apiRoutes
        .filter((r) => /^\/api\/v1\/(health|config|auth|doc|reference|tags|search|push)(\/|$)/.test(r.path))
        .map((r) => `${r.method} ${r.path}`)
        .sort(),
    );
    // No empty area (a nested stack of nothing).
    for (const area of API_AREAS) expect([area, byArea(area).length > 0]).toEqual([area, true]);
  });
});
