import { describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';
import { laterMillisecond } from '../../support/wait.js';

const api = useApi();

describe('POST /api/v1/chats/{chatId}/archive and /unarchive', () => {
  it('archives and unarchives, bumping updated_at each time, even when already in that state', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    let last = chat.updated_at;
    for (const [verb, archived] of [
      ['archive', true],
      ['archive', true],
      ['unarchive', false],
      ['unarchive', false],
    ] as const) {
      await laterMillisecond();
      const res = await api.post(`/api/v1/chats/${chat.id}/${verb}`, { ignored: 'body' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      const now = (await api.get(`/api/v1/chats/${chat.id}`)).body;
      expect(now.is_archived).toBe(archived);
      expect(now.updated_at > last).toBe(true);
      last = now.updated_at;
      expect({ ...now, is_archived: chat.is_archived, updated_at: chat.updated_at }).toEqual(chat);
    }
  });

  it('ignores a malformed body on a route that takes none', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const res = await api.request('POST', `/api/v1/chats/${chat.id}/archive`, undefined, { raw: '{oops' });
    expect(res.status).toBe(200);
  });

  it('moves the chat between the archived=true and archived=false lists', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const ids = async (archived: string) =>
      (await api.get(`/api/v1/chats?limit=100&archived=${archived}`)).body.data.map((c: { id: string }) => c.id);
    expect(await ids('false')).toContain(chat.id);
    await api.post(`/api/v1/chats/${chat.id}/archive`);
    expect(await ids('true')).toContain(chat.id);
    expect(await ids('false')).not.toContain(chat.id);
  });
});
