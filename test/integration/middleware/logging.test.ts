/**
 * Request logs under concurrency (issue 12): the local runtime serves many requests in one
 * process, as Lambda's multi-concurrency mode does, and runs each in its own invocation
 * context (local/invocations.ts), so every `request` line carries its own request's keys:
 * its request id, route and path, consistent with the status it reports.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi } from '../../support/api.js';
import type { TestApi } from '../../support/api.js';

let api: TestApi;
const lines: string[] = [];
const write = process.stdout.write.bind(process.stdout);
beforeAll(async () => {
  api = await startApi({ env: { POWERTOOLS_LOG_LEVEL: 'INFO' } });
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{')) {
      lines.push(chunk);
      return true;
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
});
afterAll(async () => {
  process.stdout.write = write;
  await api?.close();
});

describe('request logs', () => {
  it("keep each concurrent request's own request id, route and path", async () => {
    const missing = (i: number) => `nochat${String(i).padStart(15, '0')}`;
    const sent = await Promise.all(
      Array.from({ length: 15 }, (_, i) => [
        api.get('/api/v1/health'),
        api.get(`/api/v1/chats/${missing(i)}`),
        api.post('/api/v1/chats', { agentIds: ['agent-default'], modelId: 'model-default', title: `t${i}` }),
      ]).flat(),
    );
    expect(sent.map((r) => r.status).sort()).toEqual(
      [...Array(15).fill(200), ...Array(15).fill(201), ...Array(15).fill(404)].sort(),
    );
    const requests = lines
      .flatMap((l) => l.split('\n'))
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.message === 'request');
    expect(requests).toHaveLength(45);
    expect(new Set(requests.map((l) => l.requestId)).size).toBe(45);
    const shape = (l: Record<string, unknown>) => {
      if (l.path === '/api/v1/health') return [l.route, l.method, l.status];
      if (String(l.path).startsWith('/api/v1/chats/nochat')) return [l.route, l.method, l.status];
      return [l.route, l.method, l.path, l.status];
    };
    const expected = (l: Record<string, unknown>) => {
      if (l.path === '/api/v1/health') return ['GET /api/v1/health', 'GET', 200];
      if (String(l.path).startsWith('/api/v1/chats/nochat')) return ['GET /api/v1/chats/{chatId}', 'GET', 404];
      return ['POST /api/v1/chats', 'POST', '/api/v1/chats', 201];
    };
    for (const l of requests) expect(shape(l)).toEqual(expected(l));
  });
});
