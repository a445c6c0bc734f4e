/**
 * An empty claim's long-poll in SQS requests (core/dispatch/claim.ts longPollSeconds): the OpenClaw
 * pump's `waitMs` 10000 is one ReceiveMessage (SQS ends it 10 s later); a wait of 2.4 s is a
 * 2 s long-poll and then receives without waiting until the deadline (never early).
 * The batch queue's receives are watched (test/support/storage-calls.ts watchQueueCalls).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { watchQueueCalls } from '../../support/storage-calls.js';
import { dispatchApi } from './support.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const { api, d } = dispatchApi(config);

let waits: number[] = [];
let unwatch: () => void = () => undefined;
beforeEach(() => {
  waits = [];
  unwatch = watchQueueCalls(api, ({ operation, input }) => {
    // The batch queue's receives only (the local flush queue's poller receives too).
    if (operation === 'ReceiveMessage' && String(input.QueueUrl).endsWith('.fifo')) {
      waits.push(Number(input.WaitTimeSeconds ?? 0));
    }
  });
});
afterEach(() => unwatch());

describe('an empty claim', () => {
  it('with waitMs 10000 (the OpenClaw pump) is one 10 s receive, answered 204 once the wait is over', async () => {
    const started = performance.now();
    const res = await d.claimMany({ workerId: 'pump', limit: 10, waitMs: 10_000 });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(204);
    expect(waits).toEqual([10]);
    expect(elapsed).toBeGreaterThanOrEqual(10_000);
    // Slack as the leases test's (an empty long-poll answered 1.5 s late in a clean clone's first minutes).
    expect(elapsed).toBeLessThan(12_500);
  }, 20_000);

  it('with waitMs 2400 is a 2 s receive, then receives without waiting until the deadline', async () => {
    const started = performance.now();
    const res = await d.claim({ workerId: 'w', waitMs: 2_400 });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(204);
    expect(waits[0]).toBe(2);
    expect(waits.length).toBeGreaterThan(1);
    expect(waits.slice(1).every((w) => w === 0)).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(2_400);
  }, 20_000);
});
