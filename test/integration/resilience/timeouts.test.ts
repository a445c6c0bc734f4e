/**
 * Timeouts (issue 17 finding 7), against a DynamoDB Local of this file's own (paused with
 * SIGSTOP, so the shared one is never touched):
 * - a request whose DynamoDB stops answering ends inside its function timeout with the
 *   contract's 500 INTERNAL_ERROR envelope (the SDK clients' budgets, platform/aws-clients.ts),
 *   or with 429 and Retry-After when what went unanswered changed nothing of its own (a read cut
 *   off by the invocation's deadline, a rate-limit lease or an event-number reservation:
 *   store/db.ts), and the service answers normally once DynamoDB is back;
 * - a handler that runs past its function timeout gets what API Gateway answers then (its bare
 *   500), and its invocation is abandoned: it writes nothing afterwards (local/server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startDynamo } from '../../../local/dynamo.js';
import type { LocalDynamo } from '../../../local/dynamo.js';
import { ddb } from '../../../functions/store/db.js';
import { DYNAMODB_BUDGET, worstCaseMs } from '../../../functions/platform/aws-clients.js';
import { DEFAULT_FUNCTION_TIMEOUT_SECONDS } from '../../../lib/routes.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import { eventually } from '../../support/wait.js';

let dynamo: LocalDynamo | undefined;
// The run's shared DynamoDB Local, given back to the next test file of this worker.
const sharedEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
beforeAll(async () => {
  dynamo = await startDynamo();
  // useApi (below) builds its table on this endpoint.
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
}, 60_000);
// The second test runs under a shorter function timeout (the first keeps the route's own: its
// subject is the SDK clients' budget inside it).
let shortTimeoutSeconds: number | undefined;
const api = useApi({ config: oneAgentConfig, functionTimeoutSeconds: () => shortTimeoutSeconds });
afterAll(async () => {
  process.env.TEST_DYNAMODB_ENDPOINT = sharedEndpoint;
  dynamo?.process.kill('SIGCONT');
  await dynamo?.stop();
});

const FUNCTION_TIMEOUT_MS = DEFAULT_FUNCTION_TIMEOUT_SECONDS * 1000;
/** The second test's timeout: waited out, and still past the 7 s a write needs to start (platform/deadline.ts). */
const SHORT_TIMEOUT_SECONDS = 9;
const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

describe('DynamoDB stops answering', () => {
  it('a read and a write end inside the function timeout with the 500 or 429 envelope, then recover', async () => {
    const chat = await newChat();
    dynamo!.process.kill('SIGSTOP');
    let results;
    try {
      results = await Promise.all([
        timed(() => api.get(`/api/v1/chats/${chat.id}`)),
        timed(() => api.post(`/api/v1/chats/${chat.id}/mark-read`)),
      ]);
    } finally {
      dynamo!.process.kill('SIGCONT');
    }
    for (const { value: res, ms } of results) {
      // Which call is left unanswered first (and whether the SDK's attempts or the deadline end it) varies.
      expect([429, 500]).toContain(res.status);
      expect(res.body).toEqual(
        res.status === 500
          ? { error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null } }
          : {
              error: {
                code: 'RATE_LIMIT_ERROR',
                message: 'Too many concurrent writes to this resource. Retry shortly.',
                details: null,
              },
            },
      );
      if (res.status === 429) expect(res.headers.get('retry-after')).toBe('1');
      // Within the client's budget (every attempt timing out), hence inside the function timeout.
      expect(ms).toBeGreaterThanOrEqual(DYNAMODB_BUDGET.requestTimeoutMs);
      expect(ms).toBeLessThan(worstCaseMs(DYNAMODB_BUDGET) + 1500);
      expect(ms).toBeLessThan(FUNCTION_TIMEOUT_MS);
    }
    // Back: the same requests succeed.
    expect((await api.get(`/api/v1/chats/${chat.id}`)).status).toBe(200);
    expect((await api.post(`/api/v1/chats/${chat.id}/mark-read`)).status).toBe(200);
  }, 40_000);
});

describe('a handler past its function timeout', () => {
  it("gets API Gateway's bare 500 at the timeout, and its invocation writes nothing afterwards", async () => {
    const chat = await newChat();
    // Waited out in full: the local runtime's shorter setting (measured: 15 s before, now 9 s).
    shortTimeoutSeconds = SHORT_TIMEOUT_SECONDS;
    const timeoutMs = SHORT_TIMEOUT_SECONDS * 1000;
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    const eventsBefore = (await readEvents(api.tableName)).length;
    // The mark-read's read of the chat hangs (DynamoDB itself is fine) until released, outside
    // the client's own deadline (store/db.ts withinDeadline, which would answer 429 first): what
    // the runtime's timeout is for, work that does not watch the clock.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    let refusedAfter = 0;
    const hangChatRead: Parameters<ReturnType<typeof ddb>['middlewareStack']['add']>[0] =
      (next, context) => async (args) => {
        const input = args.input as { Key?: { pk?: string; sk?: string } };
        if (context.commandName === 'GetItemCommand' && input.Key?.pk === `CHAT#${chat.id}` && held === 0) {
          held++;
          await gate;
        }
        try {
          return await next(args);
        } catch (error) {
          // Refused: the invocation is abandoned, and its time is over anyway (store/db.ts).
          if ((error as Error).message.includes('abandoned') || (error as Error).name === 'BusyError') refusedAfter++;
          throw error;
        }
      };
    ddb().middlewareStack.addRelativeTo(hangChatRead, {
      relation: 'before',
      toMiddleware: 'invocationDeadline',
      name: 'hang-chat-read',
    });
    try {
      const { value: res, ms } = await timed(() => api.post(`/api/v1/chats/${chat.id}/mark-read`));
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.body).toEqual({ message: 'Internal Server Error' });
      expect(ms).toBeGreaterThanOrEqual(timeoutMs - 50);
      expect(ms).toBeLessThan(timeoutMs + 2000);
      // Released, the abandoned invocation goes on: its next AWS call is refused.
      release();
      await eventually(
        () => refusedAfter,
        (n) => n > 0,
        { timeoutMs: 3000, intervalMs: 50, what: "the abandoned invocation's next call refused" },
      );
      expect(refusedAfter).toBeGreaterThan(0);
    } finally {
      release();
      ddb().middlewareStack.remove('hang-chat-read');
      shortTimeoutSeconds = undefined;
    }
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after).toMatchObject({ last_read_at: null, unread_count: 1 });
    expect((await readEvents(api.tableName)).slice(eventsBefore)).toEqual([]);
  }, 40_000);
});
