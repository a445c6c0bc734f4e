/**
 * A chat rewrite (mark-read, mark-unread, PATCH: core/chat-recompute.ts rewrite) reads the chat and its
 * newest messages side by side, one round trip, and trusts the messages only when they agree
 * with the chat (recompute / agreesWith). The race that check exists for is staged by a spy in
 * rewrite-reads-race.test.ts (sources only). The trips counted are a warm instance's
 * (COUNTING_ENV): each test's first mark-read warms the function's environment on the rehearsal.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { COUNTING_ENV, useApi } from '../../support/api.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config, env: COUNTING_ENV });

let chatId: string;
beforeAll(async () => {
  chatId = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
  const say = (content: string) =>
    api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', content });
  expect((await say('first')).status).toBe(201);
  expect((await say('second')).status).toBe(201);
  // A warm environment of mark-read (on the rehearsal, the first request of a function is a cold
  // start, which also leases its rate-limit block and reads the configuration).
  expect((await api.post(`/api/v1/chats/${chatId}/mark-read`, {})).status).toBe(200);
});
describe('a chat rewrite', () => {
  it('reads the chat and its newest messages in one round trip when they agree', async () => {
    const res = await api.post(`/api/v1/chats/${chatId}/mark-read`, {});
    expect(res.status).toBe(200);
    // The chat beside its messages, the event number, the transaction (was 4: chat, then messages).
    expect(res.headers.get('x-storage-trips')).toBe('3');
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    expect([chat.last_message_preview, chat.unread_count]).toEqual(['second', 0]);
  });

  it("agrees with a chat whose last_message_at is a stream's completion time: the first read after a reply", async () => {
    const streamed = await api.post(`/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    });
    expect(streamed.status).toBe(201);
    expect((await api.post(`/api/v1/messages/${streamed.body.id}/chunks`, { deltaText: 'a streamed ' })).status).toBe(
      200,
    );
    const done = await api.post(`/api/v1/messages/${streamed.body.id}/complete`, { finalText: 'a streamed reply' });
    expect(done.status).toBe(200);
    // The completion set the chat's last_message_at to its own time, the message's updated_at.
    const before = (await api.get(`/api/v1/chats/${chatId}`)).body;
    expect(before.last_message_at).toBe(done.body.updated_at);
    expect(before.last_message_at).not.toBe(streamed.body.created_at);

    const res = await api.post(`/api/v1/chats/${chatId}/mark-read`, {});
    expect(res.status).toBe(200);
    // The messages read beside the chat are used: 3 trips, not 4.
    expect(res.headers.get('x-storage-trips')).toBe('3');
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    // The recompute (§3.3) describes the reply by its creation, as a re-read would have.
    expect([chat.last_message_preview, chat.last_message_role, chat.unread_count]).toEqual([
      'a streamed reply',
      'agent',
      0,
    ]);
    expect(chat.last_message_at).toBe(streamed.body.created_at);
  });
});
