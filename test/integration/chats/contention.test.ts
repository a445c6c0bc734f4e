/**
 * A busy chat (issue 17 finding 5): a hundred mark-reads or PATCHes of one chat at once all land
 * on their first attempt (they commute), with every counter exact and the event log gap-free.
 * Never a 5xx. The races staged inside a request (a pin racing a message, a chat that keeps
 * moving under a write) are in contention-staged.test.ts (sources only).
 */
import { describe, expect, it } from '@jest/globals';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { configOf, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import type { LoggedEvent } from '../../support/events.js';
import { retryingBusy } from '../../support/retry.js';
import { watchStorageCalls } from '../../support/storage-calls.js';
import type { Retried } from '../../support/retry.js';

const api = useApi({ config: configOf(['alpha'], ['m', 'n']) });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['alpha'], modelId: 'm' })).body;
const agentSays = (chatId: string, content: string) =>
  api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'alpha', content });

/** Counts cancelled transactions (a version race or a transaction conflict each) while `fn` runs. */
async function countingCancellations<T>(fn: () => Promise<T>): Promise<{ result: T; cancelled: number }> {
  let cancelled = 0;
  const unwatch = watchStorageCalls(api, ({ error }) => {
    if (error === 'TransactionCanceledException') cancelled++;
  });
  try {
    return { result: await fn(), cancelled };
  } finally {
    unwatch();
  }
}

/**
 * The whole log is numbered 1..n with no hole: each number holds an event or was voided by a write
 * that gave up (readers skip those at once, no grace period).
 */
async function expectGapFreeLog(): Promise<{ events: LoggedEvent[]; voided: number }> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: api.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': Keys.event(1).pk },
      ConsistentRead: true,
    }),
  );
  const numbers = (out.Items ?? []).map((item) => Number(item.seq));
  expect(out.LastEvaluatedKey).toBeUndefined();
  expect(numbers).toEqual(numbers.map((_, i) => i + 1));
  const events = await readEvents(api.tableName);
  return { events, voided: numbers.length - events.length };
}

const statuses = (results: Response[]) => {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

/**
 * 50 writers at once: the old design already failed them (every one of them cancelled the
 * others' transactions); more would only measure how fast a loaded DynamoDB Local serializes
 * writes (test/bench/contention.ts measures 100 and 50).
 */
const N = 50;

describe(`${N} concurrent writes to one chat`, () => {
  it('mark-read: all 200 on the first attempt, one chat.read each, unread 0', async () => {
    const chat = await newChat();
    for (const text of ['a', 'b', 'c']) expect((await agentSays(chat.id, text)).status).toBe(201);
    const before = (await readEvents(api.tableName)).length;
    const { result, cancelled } = await countingCancellations(() =>
      Promise.all(Array.from({ length: N }, () => api.post(`/api/v1/chats/${chat.id}/mark-read`))),
    );
    expect(statuses(result)).toEqual({ 200: N });
    expect(cancelled).toBe(0);
    const { events, voided } = await expectGapFreeLog();
    expect(voided).toBe(0);
    const appended = events.slice(before);
    expect(appended).toHaveLength(N);
    expect(appended.every((e) => e.type === 'chat.read' && e.payload.chatId === chat.id)).toBe(true);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after).toMatchObject({ unread_count: 0, last_message_preview: 'c', last_message_role: 'agent' });
    expect(after.last_read_at > chat.last_read_at).toBe(true);
  });

  it('PATCHes of different fields: all 200, none lost, the list order follows the pin', async () => {
    const chat = await newChat();
    const other = await newChat();
    expect((await agentSays(other.id, 'newer')).status).toBe(201);
    const before = (await readEvents(api.tableName)).length;
    const bodies: Record<string, unknown>[] = [
      ...Array.from({ length: N - 4 }, (_, i) => ({ title: `title ${i}` })),
      { pinned: true },
      { notificationsMuted: true },
      { modelId: 'n' },
      { tags: ['busy'] },
    ];
    const { result, cancelled } = await countingCancellations(() =>
      Promise.all(bodies.map((b) => api.patch(`/api/v1/chats/${chat.id}`, b))),
    );
    expect(statuses(result)).toEqual({ 200: N });
    expect(cancelled).toBe(0);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after).toMatchObject({ pinned: true, notifications_muted: true, model_id: 'n', tags: ['busy'] });
    expect(after.title).toMatch(/^title \d+$/);
    expect(after.title_source).toBe('manual');
    const { events, voided } = await expectGapFreeLog();
    expect(voided).toBe(0);
    expect(events.slice(before).filter((e) => e.type === 'chat.updated')).toHaveLength(N);
    // Pinned, it leads the list although the other chat has the newer message (§1.9).
    const list = (await api.get('/api/v1/chats?limit=2')).body.data.map((c: { id: string }) => c.id);
    expect(list).toEqual([chat.id, other.id]);
    const suggestions = (await api.get('/api/v1/tags/suggestions?q=bus')).body.data;
    expect(suggestions).toEqual([{ name: 'busy', usage_count: 1 }]);
  });

  it('mark-read, mark-unread, PATCH and new messages mixed: no 5xx, every write lands once, exact counts', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    // New agent messages make concurrent mark-reads redo their recompute; under a heavily loaded
    // DynamoDB Local one may run out of its budget and answer 429, which a client retries.
    const ops: Promise<Retried<unknown>>[] = [];
    for (let i = 0; i < N; i++) {
      const kind = i % 5;
      ops.push(
        retryingBusy(() =>
          kind === 0
            ? agentSays(chat.id, `agent ${i}`)
            : kind === 1
              ? api.post(`/api/v1/chats/${chat.id}/mark-read`)
              : kind === 2
                ? api.post(`/api/v1/chats/${chat.id}/mark-unread`)
                : api.patch(`/api/v1/chats/${chat.id}`, kind === 3 ? { title: `t${i}` } : { pinned: i % 2 === 0 }),
        ),
      );
    }
    const results = await Promise.all(ops);
    expect(results.filter(({ res }) => res.status >= 300).map(({ res }) => `${res.status} ${res.text}`)).toEqual([]);
    const log = await expectGapFreeLog();
    // One event per write, although some were answered 429 first (those wrote nothing).
    expect(log.events.slice(before).filter((e) => e.payload.chatId === chat.id)).toHaveLength(N);
    expect(log.voided).toBe(results.reduce((n, r) => n + r.busy, 0));
    // Exact counts from a settled chat: mark-unread then PATCH recounts every agent message (§3.4).
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    const recounted = (await api.patch(`/api/v1/chats/${chat.id}`, { title: 'settled' })).body;
    expect(recounted.unread_count).toBe(N / 5);
    expect((await api.get('/api/v1/chats/unread-summary')).body.unread_by_agent.alpha).toBeGreaterThanOrEqual(N / 5);
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(0);
    expect(await agentSays(chat.id, 'one more')).toMatchObject({ status: 201 });
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(1);
  });
});
