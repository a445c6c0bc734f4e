import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { authClassOf, routeId, routes } from '../../lib/routes.js';

/** The endpoint index of the contract (§5.0): `METHOD /path` → auth class. */
function contractEndpoints(): Map<string, string> {
  const text = readFileSync(new URL('../../../shared/CONTRACT.md', import.meta.url), 'utf8');
  const section = text.slice(text.indexOf('### 5.0 Endpoint index'), text.indexOf('### 5.1 '));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| (GET|POST|PATCH|PUT|DELETE) \| `([^`]+)` \| ([a-z ]+) \|/gm)) {
    rows.set(`${match[1]} /api/v1${match[2]}`, match[3]!.trim());
  }
  return rows;
}

describe('route table', () => {
  const endpoints = contractEndpoints();

  it('reads the contract index', () => {
    expect(endpoints.size).toBeGreaterThan(40);
  });

  it('lists only endpoints of the contract, each with the contract auth class', () => {
    for (const route of routes) {
      const key = `${route.method} ${route.path}`;
      expect([key, endpoints.has(key)]).toEqual([key, true]);
      expect([key, authClassOf(route)]).toEqual([key, endpoints.get(key)]);
    }
  });

  it('has unique routes, handlers and construct ids', () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(routes.map((r) => r.handler)).size).toBe(routes.length);
    expect(new Set(routes.map(routeId)).size).toBe(routes.length);
  });

  it('marks exactly the non-GET routes as writes', () => {
    for (const route of routes) expect([route.path, route.writes]).toEqual([route.path, route.method !== 'GET']);
  });
});
