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
import { readEphemeral } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { retryingBusy } from '../../support/retry.js';
import { watchStorageCalls } from '../../support/storage-calls.js';
import { eventually } from '../../support/wait.js';

const api = useApi({ config: oneAgentConfig });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body;

/**
 * DynamoDB operations sent to chat and message items while `fn` runs (the rate-limit lease and the
 * runtime configuration's cache are renewed on their own schedules), as `operation pk-prefix`.
 */
async function commandsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  // A key's value is plain on the sources and DynamoDB JSON ({ S: … }) on the rehearsal.
  const text = (value: unknown) => String((value as { S?: string } | undefined)?.S ?? value ?? '');
  const unwatch = watchStorageCalls(api, ({ operation, input }) => {
    const { Key, Item, TransactItems } = input as {
      Key?: { pk?: unknown };
      Item?: { pk?: unknown };
      TransactItems?: unknown;
    };
    const pk = text(Key?.pk ?? Item?.pk);
    if (TransactItems || pk.startsWith('CHAT#') || pk.startsWith('MSG#') || pk.startsWith('EPH'))
      sent.push(`${operation} ${pk.split('#')[0]}`);
  });
  try {
    await fn();
  } finally {
    unwatch();
  }
  return sent.sort();
}

describe('chunk writes', () => {
  // The numbering UpdateItem is on the message item (in its chat's partition); the chat item is not written.
  const EXPECTED = ['PutItem EPH', 'PutItem MSG', 'UpdateItem CHAT'];
  it('a warm chunk is a numbering UpdateItem, then the chunk and event puts: no transaction, no chat write', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const paths = [`/api/v1/messages/${msg.id}/chunks`, `/api/v1/chats/${chat.id}/messages/${msg.id}/chunks`];
    // Warm: the location is cached and the rate-limit block leased (on a deployment, each path is
    // a function of its own, whose environment is warmed by its own first chunk).
    for (const path of paths) expect((await api.post(path, { deltaText: 'a' })).status).toBe(200);
    for (const path of paths) {
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
    // A complete the chunks keep moving the message under may answer 429 (it changed nothing: README
    // "Busy chats"), as a deployment's concurrent environments make likelier; the client retries it.
    const done = retryingBusy(() => api.post(`/api/v1/messages/${msg.id}/complete`));
    const results = await Promise.all(chunks);
    const completed = (await done).res;
    expect({ status: completed.status, error: completed.body?.error }).toEqual({ status: 200, error: undefined });
    const final: string = completed.body.content_final;
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    const accepted = parts.filter((_, i) => results[i]!.status === 200);
    // Exactly the accepted chunks, each once.
    expect((final.match(/<\d+>/g) ?? []).sort()).toEqual([...accepted].sort());
    // Each accepted chunk's answer is a prefix of the final text (docs/architecture.md "Messages and streaming").
    for (const r of results) if (r.status === 200) expect(final.startsWith(r.body.content_partial ?? '')).toBe(true);
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

  it('the chat updated_at equals the latest chunk time', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const a = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'x' });
    const b = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'y' });
    expect(a.status).toBe(200);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(b.body.updated_at);
  });

  const chatItem = async (chatId: string) =>
    (await ddb().send(new GetCommand({ TableName: api.tableName, Key: Keys.chat(chatId), ConsistentRead: true })))
      .Item!;
  const listed = async (chatId: string, query = '') =>
    ((await api.get(`/api/v1/chats?limit=100${query}`)).body.data as { id: string; updated_at: string }[]).find(
      (c) => c.id === chatId,
    );

  it('every chunk sets the chat updated_at that GET and the lists show, through the open stream', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const other = await startStream(chat.id);
    expect([...(await chatItem(chat.id)).open_streams].sort()).toEqual(
      [Store.sortKeyOf(msg), Store.sortKeyOf(other)].sort(),
    );
    for (const text of ['a', 'b', 'c']) {
      const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: text });
      // Strongly consistent by id; the lists read an index, so allow them a moment.
      expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(chunk.body.updated_at);
      await eventually(
        () => listed(chat.id),
        (listing) => listing?.updated_at === chunk.body.updated_at,
        { intervalMs: 5, what: 'the listing index' },
      );
      expect((await listed(chat.id))?.updated_at).toBe(chunk.body.updated_at);
      expect((await listed(chat.id, '&archived=false'))?.updated_at).toBe(chunk.body.updated_at);
    }
    // A write to the chat in between (PATCH rewrites the whole item) keeps the open streams.
    const patched = await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Renamed' });
    expect(patched.status).toBe(200);
    const later = await api.post(`/api/v1/messages/${other.id}/chunks`, { deltaText: 'z' });
    expect(later.body.updated_at > patched.body.updated_at).toBe(true);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(later.body.updated_at);

    // Ending a stream writes the chat's updated_at itself and drops the stream.
    const completed = await api.post(`/api/v1/messages/${msg.id}/complete`);
    expect((await chatItem(chat.id)).open_streams).toEqual(new Set([Store.sortKeyOf(other)]));
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(completed.body.updated_at);
    const cancelled = await api.post(`/api/v1/messages/${other.id}/cancel`);
    expect(cancelled.status).toBe(200);
    const item = await chatItem(chat.id);
    expect(item.open_streams).toBeUndefined();
    expect(item.updated_at).toBe(cancelled.body.updated_at);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.updated_at).toBe(cancelled.body.updated_at);
  });
});
