/**
 * Recovery of dispatch work stranded between the table and the queues (contract §4.4: inputs
 * are never lost): a queue call that fails after the input's transaction committed leaves a
 * sealed batch unsent or an input unsignalled; the sweeper (functions/jobs/dispatch-sweep.ts,
 * every minute) finds it through the sparse gsi3 mark and resumes it. Faults are injected by
 * failing the handlers' calls to one queue as a missing queue would (SDK middleware on their
 * SQS client, support.ts withBrokenQueue), for one request.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import * as Dispatch from '../../../functions/core/dispatch.js';
import { handler as sweepHandler } from '../../../functions/jobs/dispatch-sweep.js';
import * as Queues from '../../../functions/platform/queues.js';
import * as Store from '../../../functions/store/dispatch-repo.js';
import { resolveConfig } from '../../../functions/platform/instance-config.js';
import { configWith, dispatchApi, sleep, withBrokenQueue } from './support.js';

const DEBOUNCE = 600;
const sequential = configWith({ mode: 'sequential' });
const batched = configWith({
  mode: 'batched_sequential',
  batchDebounceMs: DEBOUNCE,
  typingGraceMs: 500,
  maxBatchWaitMs: 2000,
});

const { api, d } = dispatchApi(sequential, { drainAfterEach: false });
afterEach(async () => {
  api().setConfig(sequential);
  await d.drain(0);
});

/** The sweeper's run with no staleness window (its schedule is every minute; waiting that long proves nothing more). */
const sweepNow = (config: Record<string, unknown>) => Dispatch.sweep(resolveConfig(config), undefined, 0);

describe('dispatch sweeper', () => {
  it('hands over a sealed batch whose send to the queue failed (sequential)', async () => {
    const chat = await d.newChat();
    // The message commits and its batch is sealed; the send fails (logged, not an error to the client).
    const id = await withBrokenQueue('DISPATCH_QUEUE_URL', () => d.say(chat.id, 'stranded'));
    await d.claimNone({ workerId: 'w1', waitMs: 1200 });
    expect(await sweepNow(sequential)).toBe(1);
    await d.takeBatchOf([id], { workerId: 'w1', waitMs: 3000 });
    // Done: the chat's mark is gone, so the next run finds nothing.
    expect(await sweepNow(sequential)).toBe(0);
  });

  it("keeps the chat's order when a later batch was sent before the stranded one is resumed", async () => {
    const chat = await d.newChat();
    const first = await withBrokenQueue('DISPATCH_QUEUE_URL', () => d.say(chat.id, 'first'));
    // The second message's send hands over the stranded first batch before its own.
    const second = await d.say(chat.id, 'second');
    await d.takeBatchOf([first], { workerId: 'w1', waitMs: 3000 });
    const b2 = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expect(b2.items.map((i) => i.sourceId)).toEqual([second]);
    await d.completeOk(b2.batchId, 'w1');
    expect(await sweepNow(sequential)).toBe(0);
  });

  it('a sender that finds an earlier batch handed over by another carries on with the later ones', async () => {
    const chat = await d.newChat();
    // Two sealed, neither sent: the chat's state says batches 1..2, none handed over.
    const ids = await withBrokenQueue('DISPATCH_QUEUE_URL', async () => [
      await d.say(chat.id, 'one'),
      await d.say(chat.id, 'two'),
    ]);
    const stale = await Store.getState(chat.id);
    expect([stale.batches_sealed, stale.batches_sent ?? 0]).toEqual([2, 0]);
    // Another sender hands batch 1 over (send, then mark) and stops there, as it knew of one.
    const first = (await Store.batchRef(chat.id, 1))!;
    await Queues.sendBatch(first.id, first.group);
    expect(await Store.markSent(chat.id, 1)).toBe(true);
    // A sender holding the older state still gets batch 2 out, after batch 1.
    await Dispatch.sendInOrder(chat.id, stale);
    await d.takeBatchOf([ids[0]], { workerId: 'w1', waitMs: 3000 });
    const b2 = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expect(b2.items.map((i) => i.sourceId)).toEqual([ids[1]]);
    await d.completeOk(b2.batchId, 'w1');
    // The seal path unmarks the chat after its hand-off; here the sweeper finds it done and does.
    expect(await sweepNow(sequential)).toBe(1);
    expect(await sweepNow(sequential)).toBe(0);
  });

  it('seals inputs whose flush signal was lost (batched_sequential)', async () => {
    api().setConfig(batched);
    const chat = await d.newChat();
    const ids = await withBrokenQueue('FLUSH_QUEUE_URL', async () => [
      await d.say(chat.id, 'one'),
      await d.say(chat.id, 'two'),
    ]);
    // Nothing would ever seal them: no signal is on its way.
    await d.claimNone({ workerId: 'w1', waitMs: DEBOUNCE + 1500 });
    expect(await sweepNow(batched)).toBe(1);
    await d.takeBatchOf(ids, { workerId: 'w1', waitMs: 3000 });
    await sleep(300);
    expect(await sweepNow(batched)).toBe(0);
  });

  it(
    'finds nothing to do when dispatch went normally, and leaves work that is still fresh to the normal ' + 'path',
    async () => {
      await d.chatWithMessage('normal');
      const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
      await d.completeOk(batch.batchId, 'w1');
      expect(await sweepNow(sequential)).toBe(0);
      // The scheduled run only takes work that has not moved for its window (30 s in sequential mode).
      const other = await d.newChat();
      await withBrokenQueue('DISPATCH_QUEUE_URL', () => d.say(other.id, 'fresh'));
      expect(await sweepHandler()).toEqual({ resumed: 0, repaired: 0 });
      expect(await sweepNow(sequential)).toBe(1);
      const resumed = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
      await d.completeOk(resumed.batchId, 'w1');
    },
  );
});
