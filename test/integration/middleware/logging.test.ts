/**
 * Request logs (issue 12). The local runtime serves many requests in one process, as Lambda's
 * multi-concurrency mode does, and runs each in its own invocation context
 * (local/invocations.ts), so every `request` line carries its own request's keys: its request
 * id, route and path, consistent with the status it reports. The line is written inside the
 * middy chain (functions/middleware/request-context.ts) behind Powertools' injectLambdaContext
 * (Lambda context keys, keys reset after each request), for the event stream too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { connect } from '../../support/sse.js';
import { eventually } from '../../support/wait.js';

const api = useApi({ env: { POWERTOOLS_LOG_LEVEL: 'INFO', SSE_LIFETIME_MS: '1500' } });
const lines: string[] = [];
const write = process.stdout.write.bind(process.stdout);
beforeAll(() => {
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && chunk.startsWith('{')) {
      lines.push(chunk);
      return true;
    }
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
});
afterAll(() => {
  process.stdout.write = write;
});

type Line = Record<string, unknown>;
const logged = (): Line[] =>
  lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);

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
    const requests = logged().filter((l) => l.message === 'request');
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

  it('carry the Lambda context and count DynamoDB calls', async () => {
    lines.length = 0;
    const tagged = await api.post('/api/v1/chats', {
      agentIds: ['agent-default'],
      modelId: 'model-default',
      title: 'x',
    });
    expect(tagged.status).toBe(201);
    await api.get('/api/v1/health');
    const [create, health] = logged().filter((l) => l.message === 'request');
    expect(create).toMatchObject({
      route: 'POST /api/v1/chats',
      status: 201,
      function_name: 'chats/create',
      function_request_id: create!.requestId,
      cold_start: expect.any(Boolean),
    });
    expect((create!.ddb as { calls: number }).calls).toBeGreaterThan(0);
    expect(create!.ms).toEqual(expect.any(Number));
    expect(health).toMatchObject({ route: 'GET /api/v1/health', function_name: 'health/get', status: 200 });
    expect(health!.requestId).not.toBe(create!.requestId);
  });

  it('log the event stream through the same chain: its request line, then its closing line', async () => {
    lines.length = 0;
    const refused = await api.get('/api/v1/events/stream?limit=0');
    expect(refused.status).toBe(400);
    const c = await connect(`${api.url}/api/v1/events/stream`);
    expect(c.status).toBe(200);
    await eventually(logged, (ls) => ls.some((l) => l.message === 'stream closed'), { timeoutMs: 5000 });
    c.close();
    const route = 'GET /api/v1/events/stream';
    const requests = logged().filter((l) => l.message === 'request');
    expect(requests.map((l) => [l.route, l.status])).toEqual([
      [route, 400],
      [route, 200],
    ]);
    const closed = logged().find((l) => l.message === 'stream closed');
    expect(closed).toMatchObject({ route, requestId: requests[1]!.requestId, fromSeq: expect.any(Number) });
    expect(closed!.ms as number).toBeGreaterThanOrEqual(1400);
  });
});
