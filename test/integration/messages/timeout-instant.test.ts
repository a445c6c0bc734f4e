/**
 * An automatic cancel reads as a cancel (issue 33 item 22), with server.streamTimeoutSeconds = 3.
 * A stream cancelled by its timeout shows updated_at = its last activity + the timeout, whoever
 * made the cancel real and when: reads that derive it before any timer runs, the timer's write,
 * and a write that finds the stream overdue all show the same instant, and every later read the
 * same record. (Before: reads showed the last chunk's time, 126 ms after creation, so the stream
 * looked cancelled before its timeout; the timer then wrote its own, later, time.)
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { useApi } from '../../support/api.js';
import { sleep } from '../../../functions/platform/retry.js';
import { eventually } from '../../support/wait.js';

const TIMEOUT_MS = 3000;
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  server: { streamTimeoutSeconds: TIMEOUT_MS / 1000 },
};

const api = useApi({ config, streamTimers: true });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body;
const shown = async (chatId: string, messageId: string) =>
  ((await api.get(`/api/v1/chats/${chatId}/messages`)).body.data as any[]).find((m) => m.id === messageId);
const stored = async (chatId: string, msg: { id: string; created_at: string }) =>
  (
    await ddb().send(
      new GetCommand({
        TableName: api.tableName,
        Key: Keys.message(chatId, msg.created_at, msg.id),
        ConsistentRead: true,
      }),
    )
  ).Item!;
const cancelEvents = async (before: number, messageId: string) =>
  (await eventsSince(api.tableName, before)).filter(
    (e) => e.type === 'message.streaming.complete' && e.payload.messageId === messageId,
  );

describe('a stream cancelled by its timeout', () => {
  it('reads it as cancelled at last activity + the timeout, before and after the timer writes it, always the same record', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'half' });
    const lastActivity = Date.parse(chunk.body.updated_at);

    // Read-only polling: every read that shows it cancelled shows the same record.
    const cancelledReads: any[] = [];
    let derivedBeforeTimer = false;
    for (const until = lastActivity + TIMEOUT_MS + 6000; Date.now() < until;) {
      const m = await shown(chat.id, msg.id);
      if (m.stream_state === 'cancelled') {
        if (cancelledReads.length === 0) derivedBeforeTimer = (await cancelEvents(before, msg.id)).length === 0;
        cancelledReads.push(m);
      } else {
        expect(m.stream_state).toBe('streaming');
        // Never cancelled before the timeout.
        expect(Date.now()).toBeLessThanOrEqual(lastActivity + TIMEOUT_MS + 1000);
      }
      await sleep(150); // kept (time is the behavior): reads spread across the timeout and the timer
    }
    expect(cancelledReads.length).toBeGreaterThan(2);
    const first = cancelledReads[0];
    expect(first).toMatchObject({ stream_state: 'cancelled', content_partial: 'half', content_final: null });
    expect(Date.parse(first.updated_at)).toBeGreaterThanOrEqual(lastActivity + TIMEOUT_MS);
    for (const later of cancelledReads) expect(later).toEqual(first);

    // The timer wrote it (the event), with that very instant.
    expect((await cancelEvents(before, msg.id)).map((e) => e.payload.streamState)).toEqual(['cancelled']);
    const item = await stored(chat.id, msg);
    expect([item.stream_state, item.updated_at]).toEqual(['cancelled', first.updated_at]);
    console.log(
      `timeout instant: cancelled at +${Date.parse(first.updated_at) - lastActivity} ms after the last chunk; ` +
        `first cancelled read ${derivedBeforeTimer ? 'derived before the timer ran' : 'after the timer'}`,
    );
  }, 30_000);

  it('a write that finds the stream overdue records the timeout instant the reads showed', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'stale' });
    expect(chunk.status).toBe(200);
    // Idle for 8 s (past the timeout, before any timer): its last activity moved into the past.
    const lastActivity = Date.now() - 8000;
    await ddb().send(
      new UpdateCommand({
        TableName: api.tableName,
        Key: Keys.message(chat.id, msg.created_at, msg.id),
        UpdateExpression: 'SET updated_at = :t',
        ExpressionAttributeValues: { ':t': new Date(lastActivity).toISOString() },
      }),
    );
    const derived = await shown(chat.id, msg.id);
    expect(derived).toMatchObject({
      stream_state: 'cancelled',
      updated_at: new Date(lastActivity + TIMEOUT_MS).toISOString(),
    });
    await sleep(300); // kept (time is the behavior): a later read, a later write
    expect(await shown(chat.id, msg.id)).toEqual(derived);
    const late = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'late' });
    expect(late.status).toBe(409);
    expect((await stored(chat.id, msg)).updated_at).toBe(derived.updated_at);
    expect(await shown(chat.id, msg.id)).toEqual(derived);
    const viaCancel = await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`);
    expect(viaCancel.body).toEqual({ cancelledMessageIds: [] });
    expect(await shown(chat.id, msg.id)).toEqual(derived);
  });

  it('cancel-streaming of an overdue stream records the timeout instant too', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'x' });
    const lastActivity = Date.now() - 8000;
    await ddb().send(
      new UpdateCommand({
        TableName: api.tableName,
        Key: Keys.message(chat.id, msg.created_at, msg.id),
        UpdateExpression: 'SET updated_at = :t',
        ExpressionAttributeValues: { ':t': new Date(lastActivity).toISOString() },
      }),
    );
    const derived = await shown(chat.id, msg.id);
    const res = await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`);
    expect(res.body).toEqual({ cancelledMessageIds: [msg.id] });
    expect(await shown(chat.id, msg.id)).toEqual(derived);
    expect(derived.updated_at).toBe(new Date(lastActivity + TIMEOUT_MS).toISOString());
    // The timer, coming later, finds it over and changes nothing.
    await eventually(
      async () => (await stored(chat.id, msg)).stream_state,
      (s) => s === 'cancelled',
      { timeoutMs: 2000, intervalMs: 100 },
    );
  });
});
