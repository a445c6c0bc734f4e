/** Typing indicators (§5.3.8, §5.3.9) and the ephemeral chunk events (§5.4.3). */
import { describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince, readEphemeral, readEvents } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';

const api = useApi({ config: oneAgentConfig });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const UNKNOWN = 'ZZZZZZZZZZZZZZZZZZZZZ';

describe('typing indicators', () => {
  it('agent typing answers 204 with no body and emits only an ephemeral chat.typing', async () => {
    const chat = await newChat();
    const since = Date.now();
    const persisted = (await readEvents(api.tableName)).length;
    const res = await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'anyone-at-all' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const ephemeral = (await readEphemeral(api.tableName, since)).filter((e) => e.payload.chatId === chat.id);
    expect(ephemeral.map((e) => [e.type, e.payload])).toEqual([
      ['chat.typing', { chatId: chat.id, agentId: 'anyone-at-all' }],
    ]);
    expect(ephemeral[0]!.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(await eventsSince(api.tableName, persisted)).toEqual([]);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.updated_at).toBe(chat.updated_at);
  });

  it('agent typing validates agentId and answers 404 for an unknown chat', async () => {
    const chat = await newChat();
    const missing = await api.post(`/api/v1/chats/${chat.id}/typing`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.fieldErrors.agentId).toBeDefined();
    const unknown = await api.post(`/api/v1/chats/${UNKNOWN}/typing`, { agentId: 'a' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ message: 'Chat not found.', details: { chatId: UNKNOWN } });
  });

  it('user typing answers 204, emits chat.user_typing and records the time for the dispatch grace', async () => {
    const chat = await newChat();
    const since = Date.now();
    const res = await api.post(`/api/v1/chats/${chat.id}/user-typing`, { ignored: true });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const ephemeral = (await readEphemeral(api.tableName, since)).filter((e) => e.payload.chatId === chat.id);
    expect(ephemeral.map((e) => [e.type, e.payload])).toEqual([
      ['chat.user_typing', { chatId: chat.id, senderId: 'user:primary' }],
    ]);
    const state = await ddb().send(
      new GetCommand({ TableName: api.tableName, Key: Keys.dispatchState(chat.id), ConsistentRead: true }),
    );
    expect(state.Item?.last_user_typing_at).toBe(ephemeral[0]!.timestamp);
    const unknown = await api.post(`/api/v1/chats/${UNKNOWN}/user-typing`);
    expect(unknown.status).toBe(404);
  });

  it('each chunk emits an ephemeral message.streaming.chunk stamped with the chunk time', async () => {
    const chat = await newChat();
    const msg = (
      await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })
    ).body;
    const since = Date.now();
    const a = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'one ' });
    const b = await api.post(`/api/v1/chats/${chat.id}/messages/${msg.id}/chunks`, { deltaText: 'two' });
    const chunks = (await readEphemeral(api.tableName, since)).filter(
      (e) => e.type === 'message.streaming.chunk' && e.payload.messageId === msg.id,
    );
    expect(chunks.map((e) => e.payload)).toEqual([
      { chatId: chat.id, messageId: msg.id, deltaText: 'one ' },
      { chatId: chat.id, messageId: msg.id, deltaText: 'two' },
    ]);
    expect(chunks.map((e) => e.timestamp)).toEqual([a.body.updated_at, b.body.updated_at]);
    const chatAfter = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(chatAfter.updated_at).toBe(b.body.updated_at);
  });
});
