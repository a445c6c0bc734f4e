import { describe, expect, it } from '@jest/globals';
import { configOf, useApi } from '../../support/api.js';
import { retryingBusy } from '../../support/retry.js';
import { laterMillisecond } from '../../support/wait.js';

const api = useApi({ config: configOf(['alpha', 'beta'], ['m']) });

const create = async (agentIds: string[], extra: Record<string, unknown> = {}) =>
  (await api.post('/api/v1/chats', { agentIds, modelId: 'm', ...extra })).body;

describe('mark-read, mark-unread and the summaries', () => {
  it('mark-unread clears last_read_at and forces unread_count to 1, even with no messages', async () => {
    const chat = await create(['alpha']);
    await laterMillisecond();
    const res = await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.last_read_at).toBeNull();
    expect(after.unread_count).toBe(1);
    expect(after.updated_at > chat.updated_at).toBe(true);
  });

  it('mark-read sets last_read_at to now and recomputes unread_count to 0', async () => {
    const chat = await create(['alpha'], { firstMessage: 'hi' });
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    await laterMillisecond();
    const res = await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    expect(res.body).toEqual({ ok: true });
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.unread_count).toBe(0);
    expect(after.last_read_at > chat.last_read_at).toBe(true);
    expect(after.updated_at).toBe(after.last_read_at);
    expect(after.last_message_preview).toBe('hi');
  });

  it('loses no update when mark-read, mark-unread and PATCH race on one chat', async () => {
    const chat = await create(['alpha'], { firstMessage: 'x' });
    // One agent message: a PATCH landing after a mark-unread recounts unread_count as 1 (§3.3),
    // so every order of the ops ends in one of the two states checked below.
    const reply = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'alpha',
      content: 'y',
    });
    expect(reply.status).toBe(201);
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    // A write the others keep moving the chat under may answer 429 (it changed nothing: README
    // "Busy chats"), likelier with a deployment's concurrent environments; the client retries it.
    const ops = Array.from({ length: 30 }, (_, i) =>
      retryingBusy(() =>
        i % 3 === 0
          ? api.post(`/api/v1/chats/${chat.id}/mark-unread`)
          : i % 3 === 1
            ? api.post(`/api/v1/chats/${chat.id}/mark-read`)
            : api.patch(`/api/v1/chats/${chat.id}`, { tags: [`t${i}`] }),
      ),
    );
    const results = await Promise.all(ops);
    expect(results.map(({ res }) => `${res.status} ${res.text}`).filter((s) => !s.startsWith('200'))).toEqual([]);
    const final = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    // Whatever won last, the state is one of the consistent outcomes.
    expect(final.last_read_at === null ? final.unread_count === 1 : final.unread_count === 0).toBe(true);
    expect(final.tags).toHaveLength(1);
  });
});
