/**
 * The request line and Powertools' key reset, with handlers called as Lambda calls them (one
 * invocation after another in one container, no per-request context): a key a handler appends
 * belongs to its own request's lines only, and every request ends with one `request` line.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

// No table here: the live configuration finds no administrator's document (the deployed one applies).
jest.unstable_mockModule('../../functions/store/config-repo.js', () => ({
  getStoredConfig: async () => undefined,
  saveStoredConfig: async () => true,
}));

const saved = { ...process.env };
// The logger takes its base level from POWERTOOLS_LOG_LEVEL when it is constructed and returns to
// it on every warm invocation (the test run sets SILENT for all workers), so the modules are
// loaded only after the level is set, as a Lambda container configured for INFO would load them.
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
const { NotFoundError } = await import('../../functions/errors.js');
const { http } = await import('../../functions/middleware/http.js');
const { Ok, json } = await import('../../functions/model/replies.js');
const { reloadEnvForTests } = await import('../../functions/platform/env.js');
const { logger } = await import('../../functions/platform/logger.js');

const lines: Record<string, unknown>[] = [];
const write = process.stdout.write.bind(process.stdout);
beforeAll(() => {
  Object.assign(process.env, { TABLE_NAME: 'unused' });
  delete process.env.INSTANCE_CONFIG;
  reloadEnvForTests();
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string' || !chunk.startsWith('{'))
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    for (const l of chunk.split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
    return true;
  }) as typeof process.stdout.write;
});
afterAll(() => {
  process.stdout.write = write;
  process.env = saved;
  reloadEnvForTests();
});

const event = (path: string, requestId: string) =>
  ({
    rawPath: path,
    headers: {},
    requestContext: { requestId, http: { method: 'GET', path } },
  }) as unknown as APIGatewayProxyEventV2;
const context = (requestId: string) =>
  ({ functionName: 'probe', awsRequestId: requestId, getRemainingTimeInMillis: () => 30_000 }) as unknown as Context;

const handler = http(
  { method: 'GET', writes: false, auth: 'public', routeKey: 'GET /probe/{id}' },
  { replies: { 200: json('Probed.', Ok) } },
  async ({ event }) => {
    if (event.rawPath === '/probe/tagged') logger.appendKeys({ chatId: 'chat-1' });
    logger.info('inside');
    if (event.rawPath === '/probe/missing') throw NotFoundError.of('chatId', 'nochat', 'Chat not found');
    return { status: 200, body: { ok: true } };
  },
);

describe('request logging, one invocation after another', () => {
  it("keeps a handler's keys on its own request and writes one request line per request, errors included", async () => {
    expect((await handler(event('/probe/tagged', 'r1'), context('r1'))).statusCode).toBe(200);
    expect((await handler(event('/probe/missing', 'r2'), context('r2'))).statusCode).toBe(404);
    expect((await handler(event('/probe/plain', 'r3'), context('r3'))).statusCode).toBe(200);
    const seen = lines.map((l) => [l.message, l.requestId, l.chatId, l.status, l.route]);
    expect(seen).toEqual([
      ['inside', 'r1', 'chat-1', undefined, 'GET /probe/{id}'],
      ['request', 'r1', 'chat-1', 200, 'GET /probe/{id}'],
      ['inside', 'r2', undefined, undefined, 'GET /probe/{id}'],
      ['request', 'r2', undefined, 404, 'GET /probe/{id}'],
      ['inside', 'r3', undefined, undefined, 'GET /probe/{id}'],
      ['request', 'r3', undefined, 200, 'GET /probe/{id}'],
    ]);
    expect(lines.every((l) => l.function_name === 'probe')).toBe(true);
  });
});
