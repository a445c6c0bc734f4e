/**
 * The chunk path without a transaction (core/streaming.ts appendChunk): the chunk item and its
 * ephemeral event are two independent puts, so these pin what the transaction used to give:
 * no chunk lost or duplicated, numbering order kept, a voided number refused, and the calls a
 * warm chunk makes.
 */
import { describe, expect, it } from '@jest/globals';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import * as Store from '../../../functions/store/messages-repo.js';
import { bumpsChat } from '../../../functions/core/streaming.js';
import { readEphemeral } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';

const api = useApi({ config: oneAgentConfig });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body;

/**
 * DynamoDB commands sent to chat and message items while `fn` runs (the rate-limit lease and the
 * runtime configuration's cache are renewed on their own schedules), as `command pk-prefix`.
 */
async function commandsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const name = `count-${Math.random()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: string }; Item?: { pk?: string }; TransactItems?: unknown };
      const pk = String(input.Key?.pk ?? input.Item?.pk ?? '');
      if (input.TransactItems || pk.startsWith('CHAT#') || pk.startsWith('MSG#') || pk.startsWith('EPH'))
        sent.push(`${context.commandName} ${pk.split('#')[0]}`);
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await fn();
  } finally {
    ddb().middlewareStack.remove(name);
  }
  return sent.sort();
}

describe('chunk writes', () => {
  const EXPECTED = ['PutItemCommand EPH', 'PutItemCommand MSG', 'UpdateItemCommand CHAT', 'UpdateItemCommand CHAT'];
  it('a warm chunk is a numbering UpdateItem, then the chunk and event puts and the chat bump: no transaction', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    // Warm: the location is cached and the rate-limit block leased.
    expect((await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'a' })).status).toBe(200);
    for (const path of [`/api/v1/messages/${msg.id}/chunks`, `/api/v1/chats/${chat.id}/messages/${msg.id}/chunks`]) {
      const sent = await commandsDuring(async () =>
        expect((await api.post(path, { deltaText: 'b' })).status).toBe(200),
      );
      expect(sent).toEqual(EXPECTED);
    }
  });

  it('keeps every chunk answered 200 exactly once and in numbering order when a complete races them', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const since = Date.now();
    const parts = Array.from({ length: 60 }, (_, i) => `<${i}>`);
    const chunks = parts.map((deltaText) => api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText }));
    const done = api.post(`/api/v1/messages/${msg.id}/complete`);
    const results = await Promise.all(chunks);
    const final: string = (await done).body.content_final;
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const accepted = parts.filter((_, i) => results[i]!.status === 200);
    // Exactly the accepted chunks, each once.
    expect((final.match(/<\d+>/g) ?? []).sort()).toEqual([...accepted].sort());
    for (const [i, r] of results.entries()) if (r.status === 200) expect(r.body.content_partial).toContain(parts[i]);
    const events = (await readEphemeral(api.tableName, since)).filter(
      (e) => e.type === 'message.streaming.chunk' && e.payload.messageId === msg.id,
    );
    for (const part of accepted) expect(events.some((e) => e.payload.deltaText === part)).toBe(true);
  });

  it('a chunk put lands once: a second put of its number, or a put after the number was voided, is refused', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const now = new Date().toISOString();
    expect(await Store.putChunk(msg.id, 1, 'first', now)).toBe(true);
    expect(await Store.putChunk(msg.id, 1, 'again', now)).toBe(false);
    const { Put } = Store.voidChunk(msg.id, 2, now);
    await ddb().send(new (await import('@aws-sdk/lib-dynamodb')).PutCommand(Put as never));
    expect(await Store.putChunk(msg.id, 2, 'late', now)).toBe(false);
    const stored = await ddb().send(
      new GetCommand({ TableName: api.tableName, Key: Keys.chunk(msg.id, 1), ConsistentRead: true }),
    );
    expect(stored.Item?.text).toBe('first');
  });

  it('bumps the chat at every chunk by default; with a bucket, once per bucket of the message activity', () => {
    const t = Date.parse('2026-01-01T00:00:00.500Z');
    expect(bumpsChat(new Date(t).toISOString(), t + 1)).toBe(true);
    expect(bumpsChat(new Date(t).toISOString(), t + 1, 1000)).toBe(false);
    expect(bumpsChat(new Date(t).toISOString(), t + 500, 1000)).toBe(true);
  });

  it('the chat updated_at equals the latest chunk time', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const a = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'x' });
    const b = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'y' });
    expect(a.status).toBe(200);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(b.body.updated_at);
  });
});
