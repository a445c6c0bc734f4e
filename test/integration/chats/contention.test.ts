/**
 * A busy chat (issue 17 finding 5): a hundred writers of one chat at once all land, on their
 * first attempt, with every counter exact and the event log gap-free; a write the chat keeps
 * moving under gives up with 429 and Retry-After, having changed nothing. Never a 5xx.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { configOf, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { readEvents } from '../../support/events.js';

const api = useApi({ config: configOf(['alpha'], ['m', 'n']) });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['alpha'], modelId: 'm' })).body;
const agentSays = (chatId: string, content: string) =>
  api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'alpha', content });

/** Counts cancelled transactions (a version race or a transaction conflict each) while `fn` runs. */
async function countingCancellations<T>(fn: () => Promise<T>): Promise<{ result: T; cancelled: number }> {
  let cancelled = 0;
  ddb().middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if ((error as { CancellationReasons?: unknown }).CancellationReasons) cancelled++;
        throw error;
      }
    },
    { step: 'initialize', name: 'count-cancellations' },
  );
  try {
    return { result: await fn(), cancelled };
  } finally {
    ddb().middlewareStack.remove('count-cancellations');
  }
}

/** The whole log is numbered 1..n with no hole and no voided number (nothing was given up). */
async function expectGapFreeLog(): Promise<Awaited<ReturnType<typeof readEvents>>> {
  const events = await readEvents(api.tableName);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  return events;
}

const statuses = (results: Response[]) => {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
};

describe('100 concurrent writes to one chat', () => {
  it('mark-read: all 200 on the first attempt, one chat.read each, unread 0', async () => {
    const chat = await newChat();
    for (const text of ['a', 'b', 'c']) expect((await agentSays(chat.id, text)).status).toBe(201);
    const before = (await readEvents(api.tableName)).length;
    const { result, cancelled } = await countingCancellations(() =>
      Promise.all(Array.from({ length: 100 }, () => api.post(`/api/v1/chats/${chat.id}/mark-read`))),
    );
    expect(statuses(result)).toEqual({ 200: 100 });
    expect(cancelled).toBe(0);
    const events = await expectGapFreeLog();
    const appended = events.slice(before);
    expect(appended).toHaveLength(100);
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
      ...Array.from({ length: 96 }, (_, i) => ({ title: `title ${i}` })),
      { pinned: true },
      { notificationsMuted: true },
      { modelId: 'n' },
      { tags: ['busy'] },
    ];
    const { result, cancelled } = await countingCancellations(() =>
      Promise.all(bodies.map((b) => api.patch(`/api/v1/chats/${chat.id}`, b))),
    );
    expect(statuses(result)).toEqual({ 200: 100 });
    expect(cancelled).toBe(0);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after).toMatchObject({ pinned: true, notifications_muted: true, model_id: 'n', tags: ['busy'] });
    expect(after.title).toMatch(/^title \d+$/);
    expect(after.title_source).toBe('manual');
    const events = await expectGapFreeLog();
    expect(events.slice(before).filter((e) => e.type === 'chat.updated')).toHaveLength(100);
    // Pinned, it leads the list although the other chat has the newer message (§1.9).
    const list = (await api.get('/api/v1/chats?limit=2')).body.data.map((c: { id: string }) => c.id);
    expect(list).toEqual([chat.id, other.id]);
    const suggestions = (await api.get('/api/v1/tags/suggestions?q=bus')).body.data;
    expect(suggestions).toEqual([{ name: 'busy', usage_count: 1 }]);
  });

  it('mark-read, mark-unread, PATCH and new messages mixed: all 2xx, counters exact afterwards', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const ops: Promise<Response>[] = [];
    for (let i = 0; i < 100; i++) {
      const kind = i % 5;
      ops.push(
        kind === 0
          ? agentSays(chat.id, `agent ${i}`)
          : kind === 1
            ? api.post(`/api/v1/chats/${chat.id}/mark-read`)
            : kind === 2
              ? api.post(`/api/v1/chats/${chat.id}/mark-unread`)
              : api.patch(`/api/v1/chats/${chat.id}`, kind === 3 ? { title: `t${i}` } : { pinned: i % 2 === 0 }),
      );
    }
    const results = await Promise.all(ops);
    expect(results.filter((r) => r.status >= 300).map((r) => `${r.status} ${r.text}`)).toEqual([]);
    const events = await expectGapFreeLog();
    expect(events.slice(before).filter((e) => e.payload.chatId === chat.id)).toHaveLength(100);
    // Exact counts from a settled chat: mark-unread then PATCH recounts every agent message (§3.4).
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    const recounted = (await api.patch(`/api/v1/chats/${chat.id}`, { title: 'settled' })).body;
    expect(recounted.unread_count).toBe(20);
    expect((await api.get('/api/v1/chats/unread-summary')).body.unread_by_agent.alpha).toBeGreaterThanOrEqual(20);
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(0);
    expect(await agentSays(chat.id, 'one more')).toMatchObject({ status: 201 });
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(1);
  });
});

describe('a chat that keeps moving under a write', () => {
  afterEach(() => {
    ddb().middlewareStack.remove('message-before-every-patch');
  });

  it('gives up with 429 RATE_LIMIT_ERROR and Retry-After, and changes nothing', async () => {
    const chat = await newChat();
    // Before every attempt of the PATCH commits, a new message lands: its recompute is always stale.
    let interfered = 0;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        type Update = { Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
        const items = (args.input as { TransactItems?: { Update?: Update }[] }).TransactItems;
        const patching = items?.some(
          (i) =>
            i.Update?.Key?.pk === `CHAT#${chat.id}` &&
            Object.values(i.Update.ExpressionAttributeValues ?? {}).includes('Never lands'),
        );
        if (context.commandName === 'TransactWriteItemsCommand' && patching) {
          interfered++;
          expect((await agentSays(chat.id, `meanwhile ${interfered}`)).status).toBe(201);
        }
        return next(args);
      },
      { step: 'initialize', name: 'message-before-every-patch' },
    );
    const before = (await readEvents(api.tableName)).length;
    const started = Date.now();
    const res = await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Never lands' });
    const took = Date.now() - started;
    ddb().middlewareStack.remove('message-before-every-patch');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: {
        code: 'RATE_LIMIT_ERROR',
        message: 'Too many concurrent writes to this resource. Retry shortly.',
        details: null,
      },
    });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(interfered).toBeGreaterThan(1);
    // Inside the route's 15 s function timeout.
    expect(took).toBeLessThan(14_000);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.title).toBe(chat.title);
    const appended = (await readEvents(api.tableName)).slice(before);
    expect(appended.map((e) => e.type)).toEqual(Array.from({ length: interfered }, () => 'message.created'));
    // The retry, once the chat is quiet, lands.
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Lands' })).status).toBe(200);
  }, 30_000);
});
