/**
 * A failed queue call on the retry path (issue 10) is repaired by the sweeper, never answered as
 * 500: a retry delay the queue refuses to set, and a repair whose message is gone. Sources only
 * (test/rehearsal/suite.js SOURCE_ONLY): the queue calls fail through a middleware on this
 * process's SQS client (withBrokenQueue), and the test runs the sweeper's repair in it.
 */
import { describe, expect, it } from '@jest/globals';
import { repairMessages } from '../../../functions/core/dispatch/sweep.js';
import * as Queues from '../../../functions/platform/queues.js';
import { batchesToRepair, getBatch, markRepair } from '../../../functions/store/dispatch/batches.js';
import { dispatchApi, withBrokenQueue } from './support.js';

const defaults = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const { d } = dispatchApi(defaults);

/** Claims in a loop like a simple worker (`waitMs` 1000) until a batch comes, or `forMs` passes. */
describe('retryable failures (default configuration: batched_sequential, 500 ms backoff base)', () => {
  it(
    'a retry delay the queue refuses to set is repaired by the sweeper: the fail answers 204 and the batch comes ' +
      'back',
    async () => {
      await d.chatWithMessage('flaky queue');
      const batch = (await d.claimUntil({ workerId: 'w1', leaseMs: 60_000 }, 10_000)).batch!;
      // The visibility change fails (the batch queue answers as a missing queue for this one request).
      const res = await withBrokenQueue('DISPATCH_QUEUE_URL', () =>
        d.fail(batch.batchId, { workerId: 'w1', reason: 'transient', retryable: true }),
      );
      expect(res.status).toBe(204);
      // The message is still hidden for the rest of the 60 s lease: nothing to claim yet.
      await d.claimNone({ workerId: 'w2', waitMs: 1500 });
      expect(await batchesToRepair(10)).toEqual([batch.batchId]);
      expect(await repairMessages()).toBe(1);
      expect(await batchesToRepair(10)).toEqual([]);
      const again = await d.claimUntil({ workerId: 'w2', leaseMs: 60_000 }, 5000);
      expect(again.batch).toEqual(batch);
      await d.completeOk(batch.batchId, 'w2');
    },
  );

  it(
    'a repair whose message is gone (retention, dead-letter) sends a copy: the batch becomes claimable ' + 'again',
    async () => {
      await d.chatWithMessage('lost message');
      const batch = (await d.claimUntil({ workerId: 'w1', leaseMs: 60_000 }, 10_000)).batch!;
      const { receipt_handle: receipt } = (await getBatch(batch.batchId))!;
      // The worker fails it for a retry, and its message is lost on the queue meanwhile.
      expect(
        (await d.fail(batch.batchId, { workerId: 'w1', reason: 'transient', retryable: true, retryDelayMs: 1000 }))
          .status,
      ).toBe(204);
      await Queues.deleteBatchMessage(receipt!);
      // Due after a second, but its message is gone: nobody can claim it.
      await d.claimNone({ workerId: 'w2', waitMs: 2000 });
      await markRepair(batch.batchId, receipt!, new Date().toISOString());
      expect(await repairMessages()).toBe(1);
      const again = await d.claimUntil({ workerId: 'w2', leaseMs: 60_000 }, 5000);
      expect(again.batch).toEqual(batch);
      await d.completeOk(batch.batchId, 'w2');
      await d.claimNone({ workerId: 'w2', waitMs: 1200 });
    },
  );
});
