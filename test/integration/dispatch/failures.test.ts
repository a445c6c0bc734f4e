/**
 * Failing batches (contract §4.4.4, §4.4.5, §4.4.6, §5.11.5) in sequential mode, so each input
 * is a batch at once: retry backoff and its override, the terminal attempt and its system
 * message, non-retryable failures, retry delays blocking the chat's later batches, and the fail
 * body's validation and lease errors. The backoff's arithmetic (doubling, the cap, the
 * override) is a unit test (test/unit/dispatch-sealing.test.ts); here one real-time case each.
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince, readEvents } from '../../support/events.js';
import { configWith, dispatchApi, expectLeaseLost, expectSchemaError } from './support.js';

const BASE = 1000;
const config = configWith({ mode: 'sequential', retryBaseMs: BASE, retryMaxMs: 4000, maxAttempts: 3 });

// Usage headers: a request's DynamoDB call count, to see that a claim does not spin.
const { api, d } = dispatchApi(config, { env: { EXPOSE_USAGE_HEADERS: '1' } });

const messagesOf = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}/messages`)).body.data as any[];

describe('fail', () => {
  it(
    'retries after the computed backoff (attempts counted at claim), then fails for good at maxAttempts with the ' +
      'system message',
    async () => {
      const { chat, id: msg } = await d.chatWithMessage('do it');
      const before = (await api.get(`/api/v1/chats/${chat.id}`)).body;
      const b1 = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
      expect(b1.items.map((i) => i.sourceId)).toEqual([msg]);

      // Attempt 1 fails: back in BASE × 2^0 ms (not 2^1: the attempt was counted at claim, once).
      await d.failOk(b1.batchId, { workerId: 'w1', reason: 'first', retryable: true });
      const failed1 = Date.now();
      await d.claimNone({ workerId: 'w2', waitMs: 0 });
      const b2 = await d.claimOne({ workerId: 'w2', waitMs: 5000 });
      const back = Date.now() - failed1;
      expect({ early: back < BASE - 100, late: back >= 2 * BASE - 100, ms: back }).toEqual({
        early: false,
        late: false,
        ms: back,
      });
      expect(b2.batchId).toBe(b1.batchId);
      expect(b2.items).toEqual(b1.items);
      expect(b2.compiledContent).toBe('do it');

      // Attempt 2 fails (retried at once: the doubled backoff is the unit test's).
      await d.failOk(b2.batchId, { workerId: 'w2', reason: 'second', retryable: true, retryDelayMs: 0 });
      const b3 = await d.claimOne({ workerId: 'w3', waitMs: 5000 });
      expect(b3.batchId).toBe(b1.batchId);

      // Attempt 3 = maxAttempts: a retryable failure is terminal now.
      const eventCount = (await readEvents(api.tableName)).length;
      await d.failOk(b3.batchId, { workerId: 'w3', reason: '  third time  ', retryable: true });
      const text = 'Dispatch failed after 3 attempts: third time';
      const messages = await messagesOf(chat.id);
      expect(messages).toHaveLength(2);
      const system = messages[0];
      expect(system).toMatchObject({
        chat_id: chat.id,
        role: 'system',
        sender_id: 'system',
        content_final: text,
        stream_state: 'complete',
        model_id: 'm',
        trace: { dispatchFailure: true },
      });
      expect(system.trace).toEqual({ dispatchFailure: true });
      const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
      expect(after).toMatchObject({
        last_message_preview: text,
        last_message_role: 'system',
        last_message_at: system.created_at,
        unread_count: before.unread_count + 1,
      });
      const events = await eventsSince(api.tableName, eventCount);
      const created = events.filter((e) => e.type === 'message.created');
      expect(created).toHaveLength(1);
      expect(created[0]!.payload).toMatchObject({
        chatId: chat.id,
        messageId: system.id,
        role: 'system',
        senderId: 'system',
        streamState: 'complete',
        contentFinal: text,
        trace: { dispatchFailure: true },
      });

      // The batch is over: no more claims of it, and the system message is no input.
      await d.claimNone({ workerId: 'w4', waitMs: 1500 });
      expectLeaseLost(await d.complete(b3.batchId, 'w3'), b3.batchId, 'w3');
      expectLeaseLost(await d.fail(b3.batchId, { workerId: 'w3', reason: 'again', retryable: true }), b3.batchId, 'w3');
    },
  );

  it('retryDelayMs 0 overrides the backoff: claimable again at once, and the old owner holds nothing', async () => {
    // A longer override in real time is the next test's (1300 ms, over the computed BASE ms).
    const { chat, batch: b1 } = await d.claimNewMessage('override', { workerId: 'w1', waitMs: 3000 });
    await d.failOk(b1.batchId, { workerId: 'w1', reason: 'now', retryable: true, retryDelayMs: 0 });
    // Back to pending, the batch is leased to no one: the old owner gets 409 everywhere.
    expectLeaseLost(await d.heartbeat(b1.batchId, { workerId: 'w1' }), b1.batchId, 'w1');
    expectLeaseLost(await d.complete(b1.batchId, 'w1'), b1.batchId, 'w1');
    expectLeaseLost(await d.fail(b1.batchId, { workerId: 'w1', reason: 'twice', retryable: true }), b1.batchId, 'w1');
    expectLeaseLost(await d.fail(b1.batchId, { workerId: 'w1', reason: 'twice', retryable: false }), b1.batchId, 'w1');
    // No BASE ms wait: claimable by a claim that does not wait at all (a clock would fail on a busy machine).
    const b2 = await d.claimOne({ workerId: 'w2', waitMs: 0 });
    expect(b2.batchId).toBe(b1.batchId);
    // Second attempt, non-retryable: terminal with the attempt count.
    await d.failOk(b2.batchId, { workerId: 'w2', reason: 'give up', retryable: false });
    expect((await messagesOf(chat.id))[0]).toMatchObject({
      role: 'system',
      content_final: 'Dispatch failed after 2 attempts: give up',
    });
  });

  it('a retry delay that is not a whole number of seconds ends within about one tick (§11)', async () => {
    const { batch: b1 } = await d.claimNewMessage('odd delay', { workerId: 'w1', waitMs: 3000 });
    await d.failOk(b1.batchId, { workerId: 'w1', reason: 'soon', retryable: true, retryDelayMs: 1300 });
    const failedAt = Date.now();
    const b2 = await d.claimOne({ workerId: 'w2', waitMs: 5000 });
    const after = Date.now() - failedAt;
    await d.completeOk(b2.batchId, 'w2');
    expect(b2.batchId).toBe(b1.batchId);
    // Not before its time, and not rounded up to 2 s either.
    expect({ early: after < 1300 - 100, late: after > 1300 + 600, ms: after }).toEqual({
      early: false,
      late: false,
      ms: after,
    });
  });

  it('a claim that ends before a batch is due waits quietly instead of spinning on it', async () => {
    const { batch: b1 } = await d.claimNewMessage('not yet', { workerId: 'w1', waitMs: 3000 });
    await d.failOk(b1.batchId, { workerId: 'w1', reason: 'later', retryable: true, retryDelayMs: 2900 });
    // Its message reappears after 2 s (whole seconds, rounded down); this claim's wait ends at
    // 2.4 s, before the batch is due at 2.9 s (half a second of slack for a busy machine): it
    // looks, gives the message back, and pauses.
    const res = await d.claim({ workerId: 'w2', waitMs: 2400 });
    expect(res.status).toBe(204);
    const calls = Number(res.headers.get('x-ddb-calls'));
    expect({ calls, quiet: calls <= 12 }).toEqual({ calls, quiet: true });
    const b2 = await d.claimOne({ workerId: 'w2', waitMs: 3000 });
    expect(b2.batchId).toBe(b1.batchId);
    await d.completeOk(b2.batchId, 'w2');
  });

  it('a non-retryable failure is terminal at once', async () => {
    const { chat } = await d.chatWithMessage('fragile');
    const before = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    const b1 = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    const eventCount = (await readEvents(api.tableName)).length;
    await d.failOk(b1.batchId, { workerId: 'w1', reason: 'bad input', retryable: false });
    const after = await d.expectFailureMessage(chat.id, 'Dispatch failed after 1 attempts: bad input');
    expect(after.unread_count).toBe(before.unread_count + 1);
    const created = (await eventsSince(api.tableName, eventCount)).filter((e) => e.type === 'message.created');
    expect(created.map((e) => e.payload.trace)).toEqual([{ dispatchFailure: true }]);
    await d.claimNone({ workerId: 'w2', waitMs: 1500 });
    expectLeaseLost(await d.heartbeat(b1.batchId, { workerId: 'w1' }), b1.batchId, 'w1');
  });

  it("a batch waiting out its retry delay blocks its chat's later batches while other chats flow", async () => {
    const { chat: a, id: a1 } = await d.chatWithMessage('a1');
    const a2 = await d.say(a.id, 'a2');
    const { id: b1 } = await d.chatWithMessage('b1');
    const first = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expect(first.items.map((i) => i.sourceId)).toEqual([a1]);
    // Taken before the fail: its delay runs from the service's clock reading, which comes after.
    const failedAt = Date.now();
    await d.failOk(first.batchId, { workerId: 'w1', reason: 'wait', retryable: true, retryDelayMs: 3000 });
    // Chat B flows; chat A's second batch does not jump the queue.
    await d.takeBatchOf([b1], { workerId: 'w2', waitMs: 2000 });
    await d.claimNone({ workerId: 'w2', waitMs: 1000 });
    // After the delay: chat A's first batch again, then its second.
    const retried = await d.claimOne({ workerId: 'w2', waitMs: 5000 });
    expect(Date.now() - failedAt).toBeGreaterThanOrEqual(3000);
    expect(retried.batchId).toBe(first.batchId);
    await d.claimNone({ workerId: 'w3', waitMs: 500 });
    await d.completeOk(retried.batchId, 'w2');
    await d.takeBatchOf([a2], { workerId: 'w3', waitMs: 3000 });
  });

  it('validates the fail body and answers 409 to another worker and 404 to an unknown batch', async () => {
    const { chat } = await d.chatWithMessage('validate');
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 20_000 });
    const id = batch.batchId;

    expectSchemaError(await d.fail(id, { workerId: 'w1', retryable: true }), 'reason');
    expectSchemaError(await d.fail(id, { workerId: 'w1', reason: 5, retryable: true }), 'reason');
    const blank = await d.fail(id, { workerId: 'w1', reason: '   ', retryable: true });
    expect(blank.status).toBe(400);
    expect(blank.body.error.code).toBe('VALIDATION_ERROR');
    expectSchemaError(await d.fail(id, { workerId: 'w1', reason: 'x' }), 'retryable');
    expectSchemaError(await d.fail(id, { workerId: 'w1', reason: 'x', retryable: 'yes' }), 'retryable');
    expectSchemaError(
      await d.fail(id, { workerId: 'w1', reason: 'x', retryable: true, retryDelayMs: -1 }),
      'retryDelayMs',
    );
    expectSchemaError(
      await d.fail(id, { workerId: 'w1', reason: 'x', retryable: true, retryDelayMs: 1.5 }),
      'retryDelayMs',
    );
    expectSchemaError(await d.fail(id, { reason: 'x', retryable: true }), 'workerId');
    expectSchemaError(await d.fail(id, { workerId: '', reason: 'x', retryable: true }), 'workerId');

    expectLeaseLost(await d.fail(id, { workerId: 'intruder', reason: 'mine', retryable: false }), id, 'intruder');
    expectLeaseLost(await d.fail(id, { workerId: 'intruder', reason: 'mine', retryable: true }), id, 'intruder');
    expectLeaseLost(
      await d.fail(id, { workerId: 'intruder', reason: 'mine', retryable: true, retryDelayMs: 0 }),
      id,
      'intruder',
    );

    const unknown = await d.fail('AAAAAAAAAAAAAAAAAAAAA', { workerId: 'w1', reason: 'x', retryable: false });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ code: 'NOT_FOUND', message: 'Dispatch batch not found.', details: null });
    const odd = await d.fail('not-a-batch', { workerId: 'w1', reason: 'x', retryable: false });
    expect(odd.status).toBe(404);
    expect(odd.body.error).toEqual({ code: 'NOT_FOUND', message: 'Dispatch batch not found.', details: null });

    // None of that touched the lease: the owner still completes, and no system message was written.
    await d.completeOk(id, 'w1');
    expect((await messagesOf(chat.id)).map((m) => m.role)).toEqual(['user']);
  });
});
