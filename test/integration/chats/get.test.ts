import { describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';
import { chatNotFound } from '../../support/shapes.js';

const api = useApi();

describe('GET /api/v1/chats/{chatId}', () => {
  it('returns the chat as created', async () => {
    const created = (await api.post('/api/v1/chats', newChat({ title: 'Hello', tags: ['x'] }))).body;
    const res = await api.get(`/api/v1/chats/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(created);
  });

  it.each([
    ['an unknown well-formed id', 'AAAAAAAAAAAAAAAAAAAAA'],
    ['a malformed id', 'not-an-id'],
    ['an id with encoded characters', 'a%20b%2Fc'],
  ])('answers 404 with details.chatId for %s', async (_label, id) => {
    const res = await api.get(`/api/v1/chats/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: chatNotFound(decodeURIComponent(id)) });
  });

  it.each(['archive', 'unarchive', 'mark-read', 'mark-unread'])(
    'POST /chats/{id}/%s on an unknown chat is 404 with details.chatId',
    async (verb) => {
      const res = await api.post(`/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA/${verb}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual(chatNotFound('AAAAAAAAAAAAAAAAAAAAA'));
    },
  );

  it('PATCH on an unknown chat is 404 after the rule checks', async () => {
    const missing = await api.patch('/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA', { pinned: true });
    expect(missing.status).toBe(404);
    expect(missing.body.error.details).toEqual({ chatId: 'AAAAAAAAAAAAAAAAAAAAA' });
    const rule = await api.patch('/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA', { title: ' ' });
    expect(rule.status).toBe(400);
  });
});
