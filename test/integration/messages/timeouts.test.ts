/**
 * Stream timeouts (§4.2) with server.streamTimeoutSeconds = 3: the local runtime's timers run
 * the same two stages as AWS (the delayed check, handed to the flush queue's consumer as in
 * AWS, then the state machine loop for a stream still active at its check:
 * local/stream-timers.ts), and reads and writes treat an overdue
 * stream as cancelled even before a timer gets to it.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { useApi } from '../../support/api.js';
import type { TestApi } from '../../support/api.js';
import type { Rehearsal } from '../../../local/rehearse/rehearsal.js';
import { localStreamTimers } from '../../../local/stream-timers.js';
import { sleep } from '../../../functions/platform/retry.js';
import { eventually } from '../../support/wait.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  // 3 s: long enough that a loaded machine still gets a test's first chunk in before its timer.
  server: { streamTimeoutSeconds: 3 },
};

const api = useApi({ config, streamTimers: true });

/**
 * Whether the stream got a state machine loop (stage 2) rather than ending at its check: on a
 * deployment, an execution named by the message id (the operator's ListExecutions).
 */
const looped = (messageId: string) => {
  const rehearsal = (api as TestApi & { rehearsal?: Rehearsal }).rehearsal;
  if (rehearsal) return rehearsal.executions().some((e) => e.name === messageId);
  return localStreamTimers()!.looped().has(messageId);
};

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body;
const listed = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}/messages`)).body.data as any[];

/** Moves a stream's last activity into the past, as if it had been idle for `ms`. */
async function ageStream(chatId: string, message: { id: string; created_at: string }, ms: number) {
  const key = Keys.message(chatId, message.created_at, message.id);
  await ddb().send(
    new UpdateCommand({
      TableName: api.tableName,
      Key: key,
      UpdateExpression: 'SET updated_at = :t',
      ExpressionAttributeValues: { ':t': new Date(Date.now() - ms).toISOString() },
    }),
  );
}

describe('stream timeout', () => {
  it('the timer cancels an idle stream after the timeout, keeping its partial text, with the event', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'half an ans' });
    // The timeout runs from the message's updated_at: the time its last chunk was accepted.
    const lastActivity = Date.parse(chunk.body.updated_at);
    await sleep(2000); // kept (time is the behavior): not cancelled before the timeout
    // Never before the timeout.
    expect((await listed(chat.id))[0]).toMatchObject({ id: msg.id, stream_state: 'streaming' });
    const cancelled = await eventually(
      async () => (await eventsSince(api.tableName, before)).some((e) => e.type === 'message.streaming.complete'),
      Boolean,
      { timeoutMs: 6000, intervalMs: 100 },
    );
    expect(cancelled).toBe(true);
    const events = await eventsSince(api.tableName, before);
    const end = events.find((e) => e.type === 'message.streaming.complete')!;
    expect(end.payload).toEqual({
      chatId: chat.id,
      messageId: msg.id,
      role: 'agent',
      streamState: 'cancelled',
      finalText: null,
    });
    expect(Date.parse(end.timestamp) - lastActivity).toBeGreaterThan(3000);
    expect(Date.parse(end.timestamp) - lastActivity).toBeLessThan(3000 + 30_000);
    // Stored for real (not only presented): the item says cancelled, with the text kept.
    const item = await ddb().send(
      new GetCommand({
        TableName: api.tableName,
        Key: Keys.message(chat.id, msg.created_at, msg.id),
        ConsistentRead: true,
      }),
    );
    expect(item.Item).toMatchObject({ stream_state: 'cancelled', content_partial: 'half an ans', content_final: null });
    const chatAfter = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(chatAfter.updated_at).toBe(end.timestamp);
    const late = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'late' });
    expect(late.status).toBe(409);
    expect(late.body.error.details).toEqual({ messageId: msg.id, streamState: 'cancelled' });
  });

  it('an empty stream cancelled by the timer disappears from the listing', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    expect((await listed(chat.id)).map((m) => m.id)).toEqual([msg.id]);
    const gone = await eventually(async () => (await listed(chat.id)).length === 0, Boolean, {
      timeoutMs: 7000,
      intervalMs: 100,
    });
    expect(gone).toBe(true);
    // (Reads hide an overdue empty stream at once; the check cancels it for real, T + 1 s after its start.)
    const cancelled = async () =>
      (await eventsSince(api.tableName, before)).some(
        (e) => e.type === 'message.streaming.complete' && e.payload.messageId === msg.id,
      );
    expect(await eventually(cancelled, Boolean, { timeoutMs: 5000, intervalMs: 100 })).toBe(true);
    // Overdue at its check: cancelled there, without a state machine loop.
    expect(looped(msg.id)).toBe(false);
  });

  it('hands a stream active at its check to the loop, which cancels it the timeout after its last chunk', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    // Chunks for about 5.6 s: past the check (3 s + 1 s after the start).
    let last = '';
    for (let i = 0; i < 8; i++) {
      await sleep(700); // kept (time is the behavior): chunks spread past the check
      const res = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: `${i}` });
      expect(res.status).toBe(200);
      last = res.body.updated_at;
    }
    expect(looped(msg.id)).toBe(true);
    // (The previous test's stream may be cancelled meanwhile: look at this message only.)
    const endsOf = async () =>
      (await eventsSince(api.tableName, before)).filter(
        (e) => e.type === 'message.streaming.complete' && e.payload.messageId === msg.id,
      );
    // The local loop waits exactly until the stream could be overdue; a deployment's state machine
    // waits at least MIN_LOOP_SECONDS (15 s, jobs/expire-stream.ts) between its checks, within the
    // contract's 30 s after the timeout (§4.2), which the bound below checks.
    expect(
      await eventually(async () => (await endsOf()).length > 0, Boolean, { timeoutMs: 35_000, intervalMs: 100 }),
    ).toBe(true);
    const ends = await endsOf();
    expect(ends.map((e) => [e.payload.messageId, e.payload.streamState])).toEqual([[msg.id, 'cancelled']]);
    const idle = Date.parse(ends[0]!.timestamp) - Date.parse(last);
    expect(idle).toBeGreaterThan(3000);
    expect(idle).toBeLessThan(3000 + 30_000);
    expect((await listed(chat.id))[0]).toMatchObject({
      id: msg.id,
      stream_state: 'cancelled',
      content_partial: '01234567',
    });
  });

  it('a stream kept alive by chunks is not cancelled, and completes normally', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const began = Date.now();
    for (let i = 0; i < 12; i++) {
      // Kept (time is the behavior): chunks spread past the timeout, 300 ms apart, so a chunk that
      // a loaded machine takes over 2 s to write still lands well inside the 3 s after the last.
      await sleep(300);
      const res = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: `${i % 10}` });
      expect(res.status).toBe(200);
    }
    expect(Date.now() - began).toBeGreaterThan(3000);
    const done = await api.post(`/api/v1/messages/${msg.id}/complete`);
    expect(done.status).toBe(200);
    expect(done.body.content_final).toBe('012345678901');
  });

  it('leaves a stream completed before the timer fires alone', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/complete`, { finalText: 'quick' });
    await sleep(3600); // kept: an absence (no cancel of a completed stream) past the timeout
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => [e.type, e.payload.streamState])).toEqual([
      ['message.created', 'streaming'],
      ['message.streaming.complete', 'complete'],
    ]);
    expect((await listed(chat.id))[0]).toMatchObject({ stream_state: 'complete', content_final: 'quick' });
    // Over at its check: no state machine loop (in AWS: no execution, no transition).
    expect(looped(msg.id)).toBe(false);
  });

  it('reads show an overdue stream as cancelled before any timer runs', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'stale' });
    await ageStream(chat.id, msg, 8000);
    const [shown] = await listed(chat.id);
    expect(shown).toMatchObject({
      id: msg.id,
      stream_state: 'cancelled',
      content_partial: 'stale',
      content_final: null,
    });
  });

  it('writes on an overdue stream make the cancellation real and answer 409', async () => {
    for (const op of ['chunks', 'complete', 'cancel']) {
      const chat = await newChat();
      const msg = await startStream(chat.id);
      await ageStream(chat.id, msg, 8000);
      const before = (await readEvents(api.tableName)).length;
      const res = await api.post(`/api/v1/messages/${msg.id}/${op}`, op === 'chunks' ? { deltaText: 'x' } : {});
      expect([op, res.status, res.body.error?.details]).toEqual([
        op,
        409,
        { messageId: msg.id, streamState: 'cancelled' },
      ]);
      // (Timers of earlier tests' streams may fire meanwhile: look at this message only.)
      const events = (await eventsSince(api.tableName, before)).filter((e) => e.payload.messageId === msg.id);
      expect(events.map((e) => [e.type, e.payload.messageId, e.payload.streamState])).toEqual([
        ['message.streaming.complete', msg.id, 'cancelled'],
      ]);
    }
  });

  it('cancel-streaming also cancels overdue streams', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await ageStream(chat.id, msg, 8000);
    const res = await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`);
    expect(res.body).toEqual({ cancelledMessageIds: [msg.id] });
  });
});
