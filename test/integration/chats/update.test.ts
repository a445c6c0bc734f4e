import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi } from '../../support/api.js';
import type { TestApi } from '../../support/api.js';

const config = {
  titleMaxChars: 10,
  agents: [{ id: 'assistant', name: 'A', description: '' }],
  models: [
    { id: 'model-a', name: 'A', description: '' },
    { id: 'model-b', name: 'B', description: '' },
  ],
};
const body = (o: Record<string, unknown> = {}) => ({ agentIds: ['assistant'], modelId: 'model-a', ...o });

let api: TestApi;
beforeAll(async () => {
  api = await startApi({ config });
});
afterAll(async () => api?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const suggestions = async (q: string) => (await api.get(`/api/v1/tags/suggestions?q=${encodeURIComponent(q)}&limit=100`)).body.data;

describe('PATCH /api/v1/chats/{chatId}', () => {
  it('updates each updatable field and bumps updated_at', async () => {
    const chat = (await api.post('/api/v1/chats', body())).body;
    const steps: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ title: '  Renamed  ' }, { title: 'Renamed', title_source: 'manual' }],
      [{ title: 'Auto title long', titleAutoRenamed: true }, { title: 'Auto title', title_source: 'auto' }],
      [{ title: 'Manual', titleAutoRenamed: false }, { title: 'Manual', title_source: 'manual' }],
      [{ tags: ['b', ' a ', 'b', ''] }, { tags: ['b', 'a'] }],
      [{ pinned: true }, { pinned: true }],
      [{ modelId: 'model-b' }, { model_id: 'model-b' }],
      [{ notificationsMuted: true }, { notifications_muted: true }],
      [{ pinned: false, notificationsMuted: false }, { pinned: false, notifications_muted: false }],
    ];
    let previous = chat;
    for (const [patch, expected] of steps) {
      await sleep(3);
      const res = await api.patch(`/api/v1/chats/${chat.id}`, patch);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject(expected);
      expect(res.body.updated_at > previous.updated_at).toBe(true);
      expect(res.body.agent_ids).toEqual(['assistant']);
      expect((await api.get(`/api/v1/chats/${chat.id}`)).body).toEqual(res.body);
      previous = res.body;
    }
  });

  it('answers 400 for an empty update, including titleAutoRenamed alone, and changes nothing', async () => {
    const chat = (await api.post('/api/v1/chats', body())).body;
    for (const patch of [{}, { titleAutoRenamed: true }, { unknown: 1 }]) {
      const res = await api.patch(`/api/v1/chats/${chat.id}`, patch);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message: 'At least one updatable field is required.', details: null });
    }
    const bodyless = await api.request('PATCH', `/api/v1/chats/${chat.id}`);
    expect(bodyless.status).toBe(400);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body).toEqual(chat);
  });

  it('rejects bad values with the contract errors and changes nothing', async () => {
    const chat = (await api.post('/api/v1/chats', body({ tags: ['keep'] }))).body;
    const rules: [Record<string, unknown>, string, string][] = [
      [{ title: '   ' }, 'title cannot be empty.', 'title'],
      [{ modelId: 'ghost' }, 'modelId must match a configured model id.', 'modelId'],
      [{ title: ' ', modelId: 'ghost', tags: ['x'] }, 'title cannot be empty.', 'title'],
    ];
    for (const [patch, message, field] of rules) {
      const res = await api.patch(`/api/v1/chats/${chat.id}`, patch);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message, details: { field } });
    }
    for (const [patch, field] of [
      [{ title: 1 }, 'title'],
      [{ tags: 'x' }, 'tags'],
      [{ tags: [1] }, 'tags'],
      [{ pinned: 'yes' }, 'pinned'],
      [{ modelId: 3 }, 'modelId'],
      [{ notificationsMuted: 1 }, 'notificationsMuted'],
      [{ titleAutoRenamed: 'true', title: 'x' }, 'titleAutoRenamed'],
    ] as const) {
      const res = await api.patch(`/api/v1/chats/${chat.id}`, patch);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fieldErrors).toHaveProperty(field);
    }
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body).toEqual(chat);
    expect(await suggestions('keep')).toEqual([{ name: 'keep', usage_count: 1 }]);
  });

  it('adjusts the tag catalog by the difference and never deletes entries', async () => {
    const a = (await api.post('/api/v1/chats', body({ tags: ['t-one', 't-two'] }))).body;
    await api.post('/api/v1/chats', body({ tags: ['t-two'] }));
    expect(await suggestions('t-')).toEqual([
      { name: 't-two', usage_count: 2 },
      { name: 't-one', usage_count: 1 },
    ]);
    await api.patch(`/api/v1/chats/${a.id}`, { tags: ['t-two', 't-three'] });
    expect(await suggestions('t-')).toEqual([
      { name: 't-two', usage_count: 2 },
      { name: 't-three', usage_count: 1 },
      { name: 't-one', usage_count: 0 },
    ]);
    await api.patch(`/api/v1/chats/${a.id}`, { tags: [] });
    expect(await suggestions('t-')).toEqual([
      { name: 't-two', usage_count: 1 },
      { name: 't-one', usage_count: 0 },
      { name: 't-three', usage_count: 0 },
    ]);
  });

  it('keeps tag usage counts exact under 50 concurrent tag edits', async () => {
    const chats = await Promise.all(Array.from({ length: 10 }, () => api.post('/api/v1/chats', body()).then((r) => r.body.id as string)));
    const pool = ['c-red', 'c-green', 'c-blue', 'c-black'];
    // 50 edits, 5 per chat, fired all at once; each chat ends with the tags of its last applied edit.
    const edits = Array.from({ length: 50 }, (_, i) => ({
      chatId: chats[i % 10]!,
      tags: pool.filter((_, j) => (i + j) % 3 !== 0),
    }));
    const results = await Promise.all(edits.map((e) => api.patch(`/api/v1/chats/${e.chatId}`, { tags: e.tags })));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const finalTags = await Promise.all(chats.map(async (id) => (await api.get(`/api/v1/chats/${id}`)).body.tags as string[]));
    const expected = new Map<string, number>();
    for (const tags of finalTags) for (const t of tags) expected.set(t, (expected.get(t) ?? 0) + 1);
    const counts = new Map((await suggestions('c-')).map((s: { name: string; usage_count: number }) => [s.name, s.usage_count]));
    for (const t of pool) expect([t, counts.get(t) ?? 0]).toEqual([t, expected.get(t) ?? 0]);
  });

  it('rejects more than 50 distinct tags with a clear error naming tags', async () => {
    const res = await api.post('/api/v1/chats', body({ tags: Array.from({ length: 51 }, (_, i) => `tag-${i}`) }));
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual({ field: 'tags' });
  });

  it('recomputes derived fields: a PATCH after mark-unread recounts unread messages', async () => {
    const chat = (await api.post('/api/v1/chats', body({ firstMessage: 'hello' }))).body;
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(1);
    const patched = (await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true })).body;
    // The only message is the user's own: nothing is unread after the recompute.
    expect(patched.unread_count).toBe(0);
    expect(patched.last_message_preview).toBe('hello');
    expect(patched.last_message_role).toBe('user');
    expect(patched.last_message_at).toBe(chat.last_message_at);
  });
});
