/**
 * Recovery of dispatch work stranded between the table and the queues (contract §4.4: inputs
 * are never lost): a queue call that fails after the input's transaction committed leaves a
 * sealed batch unsent or an input unsignalled; the sweeper (functions/jobs/dispatch-sweep.ts,
 * every minute) finds it through the sparse gsi3 mark and resumes it. Faults are injected by
 * failing the handlers' calls to one queue as a missing queue would (SDK middleware on their
 * SQS client, support.ts withBrokenQueue), for one request.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { NO_DEADLINE } from '../../../functions/platform/deadline.js';
import { sendInOrder } from '../../../functions/core/dispatch/seal.js';
import { sweep } from '../../../functions/core/dispatch/sweep.js';
import { env } from '../../../functions/platform/env.js';
import { handler as sweepHandler } from '../../../functions/jobs/dispatch-sweep.js';
import * as Queues from '../../../functions/platform/queues.js';
import { batchRef, markSent } from '../../../functions/store/dispatch/batch-refs.js';
import { getBatch } from '../../../functions/store/dispatch/batches.js';
import { getState } from '../../../functions/store/dispatch/state.js';
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
  api.setConfig(sequential);
  await d.drain(0);
});

/** The sweeper's run with no staleness window (its schedule is every minute; waiting that long proves nothing more). */
const sweepNow = (config: Record<string, unknown>) => sweep(resolveConfig(config), undefined, 0);

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
    const stale = await getState(chat.id);
    expect([stale.batches_sealed, stale.batches_sent ?? 0]).toEqual([2, 0]);
    // Another sender hands batch 1 over (send, then mark) and stops there, as it knew of one.
    const first = (await batchRef(chat.id, 1))!;
    await Queues.sendBatch(first);
    expect(await markSent(chat.id, 1, NO_DEADLINE)).toBe(true);
    // A sender holding the older state still gets batch 2 out, after batch 1.
    await sendInOrder(chat.id, stale, NO_DEADLINE);
    await d.takeBatchOf([ids[0]], { workerId: 'w1', waitMs: 3000 });
    const b2 = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expect(b2.items.map((i) => i.sourceId)).toEqual([ids[1]]);
    await d.completeOk(b2.batchId, 'w1');
    // The seal path unmarks the chat after its hand-off; here the sweeper finds it done and does.
    expect(await sweepNow(sequential)).toBe(1);
    expect(await sweepNow(sequential)).toBe(0);
  });

  it('seals inputs whose flush signal was lost (batched_sequential)', async () => {
    api.setConfig(batched);
    const chat = await d.newChat();
    const ids = await withBrokenQueue('FLUSH_QUEUE_URL', async () => [
      await d.say(chat.id, 'one'),
      await d.say(chat.id, 'two'),
    ]);
    // Nothing would ever seal them: no signal is on its way.
    await d.claimNone({ workerId: 'w1', waitMs: DEBOUNCE + 1500 });
    expect(await sweepNow(batched)).toBe(1);
    await d.takeBatchOf(ids, { workerId: 'w1', waitMs: 3000 });
    // Kept: an absence (nothing left for the sweeper), observable only by waiting.
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
      expect(await sweepHandler()).toEqual({ resumed: 0, repaired: 0, expired: 0, reminded: 0 });
      expect(await sweepNow(sequential)).toBe(1);
      const resumed = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
      await d.completeOk(resumed.batchId, 'w1');
    },
  );
});

/**
 * Takes a chat's batch message off the queue behind the service's back, as SQS does when a
 * message outlives its retention or is dead-lettered after too many receives: receives until it
 * gets the message of the chat's batch number `seq` (giving others back) and deletes it.
 */
async function loseMessageOf(chatId: string, seq: number): Promise<void> {
  const QueueUrl = env().DISPATCH_QUEUE_URL!;
  for (let tries = 0; tries < 20; tries++) {
    const out = await Queues.sqs().send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30 }),
    );
    for (const m of out.Messages ?? []) {
      const batch = await getBatch((JSON.parse(m.Body!) as { batchId: string }).batchId);
      if (batch?.chat_id === chatId && batch.chat_seq === seq) {
        await Queues.deleteBatchMessage(m.ReceiptHandle!);
        return;
      }
      await Queues.hideBatch(m.ReceiptHandle!, 0);
    }
  }
  throw new Error(`no message of batch ${seq} of chat ${chatId}`);
}

describe("a lost queue message does not break its chat's order", () => {
  it('a batch whose message is lost while the next one is queued is still delivered first', async () => {
    const chat = await d.newChat();
    const first = await d.say(chat.id, 'first');
    const second = await d.say(chat.id, 'second');
    await loseMessageOf(chat.id, 1);
    // Batch 2's message is now first in the chat's group; the claim that receives it finds
    // batch 1 unsettled and queues both again, in order. Batch 2 was handed out first before.
    await d.takeBatchOf([first], { workerId: 'w1', waitMs: 5000 });
    await d.takeBatchOf([second], { workerId: 'w1', waitMs: 5000 });
    // The spare copies are dropped as they turn up: nothing is handed out twice.
    await d.claimNone({ workerId: 'w1', waitMs: 1500 });
  });

  it('a leased batch whose message is lost holds its chat until it ends', async () => {
    const chat = await d.newChat();
    const first = await d.say(chat.id, 'first');
    const leased = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 30_000 });
    expect(leased.items.map((i) => i.sourceId)).toEqual([first]);
    // The leased message disappears (its retention ran out in flight); then the next batch is queued.
    const header = (await getBatch(leased.batchId))!;
    await Queues.deleteBatchMessage(header.receipt_handle!);
    const second = await d.say(chat.id, 'second');
    // Not while batch 1 is leased.
    await d.claimNone({ workerId: 'w2', waitMs: 2500 });
    await d.completeOk(leased.batchId, 'w1');
    await d.takeBatchOf([second], { workerId: 'w2', waitMs: 5000 });
    await d.claimNone({ workerId: 'w2', waitMs: 1500 });
  });
});

/**
 * A client that got no answer retries with its Idempotency-Key and gets the first attempt's
 * answer replayed. When that attempt committed but never sent its dispatch signal (a crash
 * between the two, played here by a broken queue), the replay sends it: the input is sealed now,
 * not a sweeper run later.
 */
describe('a replayed write redoes the dispatch signal its first attempt missed', () => {
  const keyed = (key: string) => ({ headers: { 'Idempotency-Key': key } });
  const choice = {
    type: 'choice',
    title: 'Ship it?',
    config: { options: [{ id: 'yes', label: 'Yes' }] },
  };

  it('a user message (batched_sequential)', async () => {
    api.setConfig(batched);
    const chat = await d.newChat();
    const post = () => api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'hi' }, keyed('m-1'));
    const first = await withBrokenQueue('FLUSH_QUEUE_URL', post);
    expect(first.status).toBe(201);
    await d.claimNone({ workerId: 'w1', waitMs: DEBOUNCE + 1200 });
    const again = await post();
    expect([again.status, again.body.id]).toEqual([201, first.body.id]);
    await d.takeBatchOf([first.body.id], { workerId: 'w1', waitMs: 3000 });
    // Nothing was left for the sweeper.
    // Kept: an absence (nothing left for the sweeper), observable only by waiting.
    await sleep(300);
    expect(await sweepNow(batched)).toBe(0);
  });

  it('a user message whose batch was sealed but not handed to the queue (sequential)', async () => {
    const chat = await d.newChat();
    const post = () => api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'hi' }, keyed('m-2'));
    const first = await withBrokenQueue('DISPATCH_QUEUE_URL', post);
    expect(first.status).toBe(201);
    await d.claimNone({ workerId: 'w1', waitMs: 1200 });
    expect((await post()).status).toBe(201);
    await d.takeBatchOf([first.body.id], { workerId: 'w1', waitMs: 3000 });
    expect(await sweepNow(sequential)).toBe(0);
  });

  it('a resolution (batched_sequential)', async () => {
    api.setConfig(batched);
    const chat = await d.newChat();
    const created = await api.post(`/api/v1/chats/${chat.id}/requests`, choice);
    expect(created.status).toBe(201);
    const resolve = () =>
      api.post(`/api/v1/requests/${created.body.id}/resolve`, { selectedOptionIds: ['yes'] }, keyed('r-1'));
    expect((await withBrokenQueue('FLUSH_QUEUE_URL', resolve)).status).toBe(200);
    await d.claimNone({ workerId: 'w1', waitMs: DEBOUNCE + 1200 });
    expect((await resolve()).status).toBe(200);
    await d.takeBatchOf([created.body.id], { workerId: 'w1', waitMs: 3000 });
  });

  it('a resolution whose batch was sealed but not handed to the queue (sequential)', async () => {
    const chat = await d.newChat();
    const created = await api.post(`/api/v1/chats/${chat.id}/requests`, choice);
    expect(created.status).toBe(201);
    const resolve = () =>
      api.post(`/api/v1/requests/${created.body.id}/resolve`, { selectedOptionIds: ['yes'] }, keyed('r-2'));
    expect((await withBrokenQueue('DISPATCH_QUEUE_URL', resolve)).status).toBe(200);
    await d.claimNone({ workerId: 'w1', waitMs: 1200 });
    expect((await resolve()).status).toBe(200);
    await d.takeBatchOf([created.body.id], { workerId: 'w1', waitMs: 3000 });
    expect(await sweepNow(sequential)).toBe(0);
  });

  it("a chat's first message (batched_sequential)", async () => {
    api.setConfig(batched);
    const create = () =>
      api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', firstMessage: 'hello' }, keyed('c-1'));
    const first = await withBrokenQueue('FLUSH_QUEUE_URL', create);
    expect(first.status).toBe(201);
    await d.claimNone({ workerId: 'w1', waitMs: DEBOUNCE + 1200 });
    const again = await create();
    expect([again.status, again.body.id]).toEqual([201, first.body.id]);
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expect([batch.chatId, batch.items.map((i) => i.content)]).toEqual([first.body.id, ['hello']]);
    await d.completeOk(batch.batchId, 'w1');
  });

  it('a chat without a first message sends nothing on replay', async () => {
    const create = () => api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, keyed('c-2'));
    expect((await create()).status).toBe(201);
    expect((await create()).status).toBe(201);
    await d.claimNone({ workerId: 'w1', waitMs: 1200 });
  });
});
