import { describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';

const api = useApi();

const count = async () => (await readEvents(api.tableName)).length;

describe('event log of chat mutations', () => {
  it('create appends chat.created, then message.created without a trace key for a first message', async () => {
    const before = await count();
    const res = await api.post('/api/v1/chats', newChat({ firstMessage: ' hi there ' }));
    const events = (await readEvents(api.tableName)).slice(before);
    expect(events.map((e) => e.type)).toEqual(['chat.created', 'message.created']);
    expect(events[0]!.payload).toEqual({ chatId: res.body.id });
    const created = events[1]!.payload;
    expect(created).toEqual({
      chatId: res.body.id,
      messageId: expect.stringMatching(/^[A-Za-z0-9_-]{21}$/),
      role: 'user',
      senderId: 'user:primary',
      streamState: 'complete',
      contentFinal: 'hi there',
      createdAt: res.body.created_at,
    });
    expect(created).not.toHaveProperty('trace');
    for (const e of events) {
      expect(e.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
      expect(e.timestamp).toBe(res.body.created_at);
    }
    expect(events[1]!.seq).toBe(events[0]!.seq + 1);
  });

  it('each chat mutation appends its own event type with { chatId }', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const steps: [() => Promise<unknown>, string][] = [
      [() => api.patch(`/api/v1/chats/${chat.id}`, { pinned: true }), 'chat.updated'],
      [() => api.post(`/api/v1/chats/${chat.id}/archive`), 'chat.archived'],
      [() => api.post(`/api/v1/chats/${chat.id}/archive`), 'chat.archived'],
      [() => api.post(`/api/v1/chats/${chat.id}/unarchive`), 'chat.unarchived'],
      [() => api.post(`/api/v1/chats/${chat.id}/mark-unread`), 'chat.unread'],
      [() => api.post(`/api/v1/chats/${chat.id}/mark-read`), 'chat.read'],
    ];
    for (const [step, type] of steps) {
      const before = await count();
      await step();
      const events = (await readEvents(api.tableName)).slice(before);
      expect(events.map((e) => [e.type, e.payload])).toEqual([[type, { chatId: chat.id }]]);
    }
  });

  it('reads, failed validations and 404s append nothing', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const before = await count();
    await api.get(`/api/v1/chats/${chat.id}`);
    await api.get('/api/v1/chats');
    await api.patch(`/api/v1/chats/${chat.id}`, {});
    await api.patch(`/api/v1/chats/${chat.id}`, { title: ' ' });
    await api.post('/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA/archive');
    await api.post('/api/v1/chats', { agentIds: [] });
    expect(await count()).toBe(before);
  });

  it('keeps sequence numbers strictly increasing under concurrent writers', async () => {
    await Promise.all(Array.from({ length: 20 }, () => api.post('/api/v1/chats', newChat())));
    const seqs = (await readEvents(api.tableName)).map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
    expect(new Set((await readEvents(api.tableName)).map((e) => e.id)).size).toBe(seqs.length);
  });
});
