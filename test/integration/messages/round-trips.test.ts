/**
 * Sequential storage round trips of the streaming writes (x-storage-trips: calls in flight
 * together count once), the latency floor on AWS at ~5-10 ms each: an agent's message and a
 * chunk in 2, a stream's completion in 3 (the message, then its event number beside the chat's
 * pin, then the transaction) where the chunks' instance completes it (the sources), 5 on a
 * deployment, where the completion's function has not seen the stream. Counted on a warm instance, as a streaming agent sees it, inside
 * one rate-limit window and configuration cache period (COUNTING_ENV says why: with the defaults
 * a slow machine saw the completion take 5), after an earlier stream of the agent.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { COUNTING_ENV, rehearsalAssembly, useApi } from '../../support/api.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config, env: COUNTING_ENV });
const trips = (res: { headers: Headers }) => Number(res.headers.get('x-storage-trips'));

let chatId: string;
beforeAll(async () => {
  chatId = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
  // Warms the chat's facts in this instance, as the agent's earlier messages would.
  await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', content: 'hi' });
  // And the chunk and completion functions, as an earlier stream of the agent would (on a
  // deployment they are functions of their own, each started cold by its first request).
  const earlier = await api.post(`/api/v1/chats/${chatId}/messages`, {
    role: 'agent',
    senderId: 'assistant',
    streaming: true,
  });
  expect((await api.post(`/api/v1/messages/${earlier.body.id}/chunks`, { deltaText: 'earlier' })).status).toBe(200);
  expect((await api.post(`/api/v1/messages/${earlier.body.id}/complete`, {})).status).toBe(200);
});

describe('round trips of the streaming writes', () => {
  it("an agent message: 2; a chunk: 2 (the stream's first 3); the completion: 3", async () => {
    const message = await api.post(`/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: 'plain',
    });
    expect([message.status, trips(message)]).toEqual([201, 2]);
    const stream = await api.post(`/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    });
    expect(stream.status).toBe(201);
    const chunkTrips: number[] = [];
    for (const deltaText of ['Hello', ',', ' wor', 'ld']) {
      const chunk = await api.post(`/api/v1/messages/${stream.body.id}/chunks`, { deltaText });
      expect(chunk.status).toBe(200);
      chunkTrips.push(trips(chunk));
    }
    // The first also finds the message's location (its pointer item), once per instance.
    expect(chunkTrips).toEqual([3, 2, 2, 2]);
    const done = await api.post(`/api/v1/messages/${stream.body.id}/complete`, {});
    // On a deployment the completion is a function of its own, which has neither the message's
    // location nor its streamed text (core/stream-text.ts: a per-container cache the chunks'
    // function fills): it reads the pointer, the message, then the chunks, before the event
    // number and the transaction. The sources serve both routes from one process and its caches.
    const completionTrips = rehearsalAssembly() ? 5 : 3;
    expect([done.status, done.body.content_final, trips(done)]).toEqual([200, 'Hello, world', completionTrips]);
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    expect([chat.last_message_preview, chat.last_message_role]).toEqual(['Hello, world', 'agent']);
  });

  it('a completion after the chat was pinned meanwhile writes the chat as pinned (its cached pin was stale)', async () => {
    const stream = await api.post(`/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    });
    await api.post(`/api/v1/messages/${stream.body.id}/chunks`, { deltaText: 'pinned reply' });
    expect((await api.patch(`/api/v1/chats/${chatId}`, { pinned: true })).status).toBe(200);
    const done = await api.post(`/api/v1/messages/${stream.body.id}/complete`, {});
    expect(done.status).toBe(200);
    // A chat with a newer message: it lists first unless the completion kept the pin in the list key.
    const other = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
    await api.post(`/api/v1/chats/${other.id}/messages`, { role: 'agent', senderId: 'assistant', content: 'newer' });
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    expect([chat.pinned, chat.last_message_preview]).toEqual([true, 'pinned reply']);
    // Pinned first, ahead of the chat with the newer message.
    const listed = (await api.get('/api/v1/chats?limit=2')).body.data.map((c: { id: string }) => c.id);
    expect(listed).toEqual([chatId, other.id]);
  });
});
