/**
 * Retryable failures with the default configuration (issue 10's reproduction), over HTTP,
 * against the runtime as `npm start` runs it (queues with a data folder): a batch failed with
 * `retryable: true` and no delay comes back after the default backoff (500 ms, then 1 s, …)
 * with the same id, items and compiledContent, whatever the lease; with `maxAttempts: 3` the
 * third failure is terminal; and the chat's later messages flow afterwards. A failed queue
 * call on this path is repaired by the sweeper, never answered as 500: retries-repair.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { getBatch } from '../../../functions/store/dispatch/batches.js';
import { LATE, dispatchApi } from './support.js';

const defaults = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const { api, d } = dispatchApi(defaults);

/** Claims in a loop like a simple worker (`waitMs` 1000) until a batch comes, or `forMs` passes. */
describe('retryable failures (default configuration: batched_sequential, 500 ms backoff base)', () => {
  it.each([60_000, 5000])(
    'a batch failed with retryable: true comes back after its backoff, twice, with leaseMs %i',
    async (leaseMs) => {
      const { chat, id } = await d.chatWithMessage('hi');
      const first = await d.claimUntil({ workerId: 'w1', leaseMs }, 10_000);
      expect(first.batch?.items.map((i) => i.sourceId)).toEqual([id]);
      const b1 = first.batch!;

      // Taken before the fail is sent: the server's backoff runs from its own later clock reading,
      // so the batch cannot come back earlier than this plus the backoff (same clock, in process).
      const failedAt = Date.now();
      await d.failOk(b1.batchId, { workerId: 'w1', reason: 'transient', retryable: true });
      const second = await d.claimUntil({ workerId: 'w1', leaseMs }, 20_000);
      expect(second.statuses.filter((s) => s !== 200 && s !== 204)).toEqual([]);
      expect(second.batch).toEqual(b1); // same batchId, items, compiledContent, attachments
      expect(Date.now() - failedAt).toBeGreaterThanOrEqual(500);
      expect(Date.now() - failedAt).toBeLessThan(500 + LATE);

      // Attempt 2 fails too: back after 1 s.
      const failedAgain = Date.now();
      await d.failOk(b1.batchId, { workerId: 'w1', reason: 'transient', retryable: true });
      const third = await d.claimUntil({ workerId: 'w2', leaseMs }, 20_000);
      expect(third.batch).toEqual(b1);
      expect(Date.now() - failedAgain).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - failedAgain).toBeLessThan(1000 + LATE);
      expect((await getBatch(b1.batchId))?.attempt_count).toBe(3);
      await d.completeOk(b1.batchId, 'w2');

      // The chat's FIFO group is free again: its next message is claimed.
      const next = await d.say(chat.id, 'and then');
      const after = await d.claimUntil({ workerId: 'w1', leaseMs }, 10_000);
      expect(after.batch?.items.map((i) => i.sourceId)).toEqual([next]);
      await d.completeOk(after.batch!.batchId, 'w1');
    },
  );

  it(
    'with maxAttempts 3, two retryable failures come back and the third is terminal; later messages still ' + 'flow',
    async () => {
      api.setConfig({ ...defaults, server: { dispatch: { maxAttempts: 3 } } });
      try {
        const { chat, id } = await d.chatWithMessage('try me');
        let batch = (await d.claimUntil({ workerId: 'w1', leaseMs: 60_000 }, 10_000)).batch!;
        expect(batch.items.map((i) => i.sourceId)).toEqual([id]);
        for (let attempt = 1; attempt <= 2; attempt++) {
          await d.failOk(batch.batchId, { workerId: 'w1', reason: `failure ${attempt}`, retryable: true });
          const again = (await d.claimUntil({ workerId: 'w1', leaseMs: 60_000 }, 20_000)).batch;
          expect(again?.batchId).toBe(batch.batchId);
          batch = again!;
        }
        await d.failOk(batch.batchId, { workerId: 'w1', reason: 'failure 3', retryable: true });
        expect(await getBatch(batch.batchId)).toMatchObject({
          status: 'failed',
          attempt_count: 3,
          last_error: 'failure 3',
        });
        const messages = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data as {
          role: string;
          content_final: string;
        }[];
        expect(messages.find((m) => m.role === 'system')?.content_final).toBe(
          'Dispatch failed after 3 attempts: failure 3',
        );

        const next = await d.say(chat.id, 'next one');
        const after = await d.claimUntil({ workerId: 'w1', leaseMs: 60_000 }, 10_000);
        expect(after.batch?.items.map((i) => i.sourceId)).toEqual([next]);
        await d.completeOk(after.batch!.batchId, 'w1');
      } finally {
        api.setConfig(defaults);
      }
    },
  );
});
