/**
 * The deadline is an argument, and the per-invocation record (usage tally, the calls' deadline)
 * lives in the runtime's invocation context (functions/platform/invocation.ts, issue 35): many
 * requests served at once by one process, as the local runtime serves them, never mix their
 * deadlines or their DynamoDB counts, and a job started from inside a request (a stream timer) has
 * neither the request's deadline nor a share of its count.
 */
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';

// No table here: the live configuration finds no administrator's document (the deployed one applies).
jest.unstable_mockModule('../../functions/store/config-repo.js', () => ({
  getStoredConfig: async () => undefined,
  saveStoredConfig: async () => true,
}));

const saved = { ...process.env };
const savedLambda = (globalThis as { awslambda?: unknown }).awslambda;
const { BusyError } = await import('../../functions/errors.js');
const { http } = await import('../../functions/middleware/http.js');
const { json } = await import('../../functions/model/replies.js');
const z = await import('../../functions/platform/zod.js');
const { COMMIT_RESERVE_MS, NO_DEADLINE, deadlineIn } = await import('../../functions/platform/deadline.js');
const { reloadEnvForTests } = await import('../../functions/platform/env.js');
const { currentInvocation } = await import('../../functions/platform/invocation.js');
const { sleep } = await import('../../functions/platform/retry.js');
const { recordCall, withUsage } = await import('../../functions/platform/usage.js');
const { transact } = await import('../../functions/store/db.js');
const { asInvocation, startInvocations } = await import('../../local/invocations.js');

beforeAll(() => {
  Object.assign(process.env, { TABLE_NAME: 'unused', EXPOSE_USAGE_HEADERS: '1' });
  delete process.env.INSTANCE_CONFIG;
  reloadEnvForTests();
  startInvocations();
});
afterAll(() => {
  process.env = saved;
  reloadEnvForTests();
  (globalThis as { awslambda?: unknown }).awslambda = savedLambda;
});

const event = (calls: number, requestId: string) =>
  ({
    rawPath: `/probe/${calls}`,
    headers: {},
    requestContext: { requestId, http: { method: 'GET', path: `/probe/${calls}` } },
  }) as unknown as APIGatewayProxyEventV2;
const context = (requestId: string, remainingMs: number) =>
  ({
    functionName: 'probe',
    awsRequestId: requestId,
    getRemainingTimeInMillis: () => remainingMs,
  }) as unknown as Context;

/** What a job started from inside the request saw (undefined: no record of its own, as it should). */
const jobsSaw: unknown[] = [];

/**
 * Records `calls` DynamoDB calls of 1 RCU each, one per turn of the event loop with a random
 * pause, so that concurrent invocations interleave; starts a job halfway that records a call too.
 */
const handler = http(
  { method: 'GET', writes: false, auth: 'public', routeKey: 'GET /probe/{calls}', storage: false },
  { replies: { 200: json('Probed.', z.object({ endsAt: z.number(), callsEndAt: z.optional(z.number()) })) } },
  async ({ event, deadline }) => {
    const calls = Number(event.rawPath.split('/').pop());
    let job: Promise<void> | undefined;
    for (let i = 0; i < calls; i++) {
      await sleep(Math.random() * 5);
      recordCall({ CapacityUnits: 1 }, 'read');
      if (i === Math.floor(calls / 2)) {
        job = asInvocation(async () => {
          await sleep(1);
          jobsSaw.push(currentInvocation());
          recordCall({ CapacityUnits: 100 }, 'read');
        });
      }
    }
    await job;
    return { status: 200, body: { endsAt: deadline.endsAt, callsEndAt: currentInvocation()?.deadline.endsAt } };
  },
);

describe('requests served side by side in one process', () => {
  it('each keeps its own deadline and DynamoDB count; a job it starts has neither', async () => {
    const started = Date.now();
    const runs = Array.from({ length: 12 }, (_, i) => ({ calls: i + 1, remainingMs: 10_000 + i * 1000 }));
    const results = await Promise.all(
      runs.map(({ calls, remainingMs }, i) =>
        asInvocation(() => handler(event(calls, `r${i}`), context(`r${i}`, remainingMs)), `r${i}`),
      ),
    );
    results.forEach((res, i) => {
      const { calls, remainingMs } = runs[i]!;
      expect(res.statusCode).toBe(200);
      // The bench reads these headers: exactly this request's calls and units, none of the others'.
      expect(res.headers['x-ddb-calls']).toBe(String(calls));
      expect(res.headers['x-ddb-rcu']).toBe(calls.toFixed(2));
      const { endsAt, callsEndAt } = JSON.parse(res.body) as { endsAt: number; callsEndAt: number };
      // Its own deadline, handed to the handler; the same one its calls are cut off by.
      expect(endsAt).toBeGreaterThanOrEqual(started + remainingMs);
      expect(endsAt).toBeLessThan(Date.now() + remainingMs);
      expect(callsEndAt).toBe(endsAt);
    });
    // Every job ran as its own invocation: no record, so no deadline and no share in the count.
    expect(jobsSaw).toHaveLength(runs.length);
    expect(jobsSaw.every((seen) => seen === undefined)).toBe(true);
  });

  it('counts what withUsage measures apart from the invocation it runs in', async () => {
    const counted = await asInvocation(async () => {
      const { usage, result } = withUsage(async () => {
        recordCall({ CapacityUnits: 2 }, 'read');
      });
      await result;
      return usage;
    });
    expect([counted.calls, counted.readUnits]).toEqual([1, 2]);
  });
});

describe('a write planned with its deadline', () => {
  it(`starts no transaction with less than ${COMMIT_RESERVE_MS} ms left: 429, and no call is made`, async () => {
    // Nothing reaches DynamoDB (TABLE_NAME is unused here): the refusal comes first.
    await expect(transact([], deadlineIn(COMMIT_RESERVE_MS - 100))).rejects.toBeInstanceOf(BusyError);
  });

  it('has no deadline outside an HTTP invocation', () => {
    expect(NO_DEADLINE.endsAt).toBe(Infinity);
    expect(currentInvocation()).toBeUndefined();
  });
});
