/**
 * GET /search ordering and paging (§9.4), and what becomes searchable when (§9.2): streams,
 * cancellations, and hits whose message is gone.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Keys } from '../../../functions/store/keys.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { indexed, messageIdsFor, searchAll } from './support.js';

const api = useApi({ config: oneAgentConfig, search: true });

const newChat = async (title: string) =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title })).body as {
    id: string;
    title: string;
  };
const say = async (chatId: string, content: string) => {
  const res = await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', content });
  expect(res.status).toBe(201);
  return res.body as { id: string; created_at: string };
};

describe('one ordering across scopes (§9.4)', () => {
  const messages: { id: string; created_at: string }[] = [];
  const chats: { id: string; title: string }[] = [];

  beforeAll(async () => {
    // 12 chats titled "walrus …", each with 2 messages mentioning walrus, and 6 walrus messages
    // in a chat whose title does not match.
    for (let i = 0; i < 12; i++) {
      const chat = await newChat(`walrus chat ${i}`);
      chats.push(chat);
      messages.push(await say(chat.id, `walrus fact ${i}a`));
      messages.push(await say(chat.id, `walrus fact ${i}b`));
    }
    const other = await newChat('unrelated');
    for (let i = 0; i < 6; i++) messages.push(await say(other.id, `more walrus ${i}`));
    await indexed(api, messages.at(-1)!.id, 'walrus');
  }, 120_000);

  /** The merged order the contract defines, computed from what the API returned when writing. */
  async function expectedOrder(): Promise<string[]> {
    const listed = await Promise.all(chats.map(async (c) => (await api.get(`/api/v1/chats/${c.id}`)).body));
    const items = [
      ...messages.map((m) => ({ ms: Date.parse(m.created_at), kind: 0, id: m.id })),
      ...listed.map((c) => ({ ms: Date.parse(c.last_message_at ?? c.updated_at), kind: 1, id: c.id })),
    ];
    items.sort((a, b) => b.ms - a.ms || a.kind - b.kind || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    return items.map((i) => i.id);
  }

  it('puts a message before a chat on equal sort keys (a chat sorts by its last message)', async () => {
    const order = await expectedOrder();
    const all = await searchAll(api, 'walrus', 'all');
    const got = all.pages.flatMap((p) => [...p.messages.map((m) => m.id), ...p.chats.map((c) => c.id)]);
    // Every chat's last message has the chat's sort key: the message must come right before its chat.
    for (const chat of chats) {
      const at = order.indexOf(chat.id);
      expect(messages.map((m) => m.id)).toContain(order[at - 1]);
    }
    expect(got.sort()).toEqual([...order].sort());
  });

  it.each([1, 2, 5, 7, 30, 100])('walks every page of limit %i with no duplicate or gap, in order', async (limit) => {
    const order = await expectedOrder();
    const all = await searchAll(api, 'walrus', 'all', limit);
    // Within a page the split keeps relative order; across pages the merged order continues.
    const got: string[] = [];
    for (const page of all.pages) {
      expect(page.chats.length + page.messages.length).toBeLessThanOrEqual(limit);
      const ids = new Set([...page.messages.map((m) => m.id), ...page.chats.map((c) => c.id)]);
      got.push(...order.filter((id) => ids.has(id)));
    }
    expect(got).toEqual(order);
    expect(all.pages.at(-1)!.cursor).toEqual({ next: null, hasMore: false });
    expect(all.pages.slice(0, -1).every((p) => p.chats.length + p.messages.length === limit)).toBe(true);
  });

  it('pages messages alone and titles alone in their own order', async () => {
    const order = await expectedOrder();
    const onlyMessages = await searchAll(api, 'walrus', 'messages', 4);
    expect(onlyMessages.chats).toEqual([]);
    expect(onlyMessages.messages.map((m) => m.id)).toEqual(order.filter((id) => messages.some((m) => m.id === id)));
    const onlyTitles = await searchAll(api, 'walrus', 'titles', 5);
    expect(onlyTitles.messages).toEqual([]);
    expect(onlyTitles.chats.map((c) => c.id)).toEqual(order.filter((id) => chats.some((c) => c.id === id)));
  });

  it('answers the first page exactly as the contract shapes it', async () => {
    const page = (await api.get('/api/v1/search?q=walrus&scope=all&limit=3')).body;
    expect(page.cursor).toEqual({ next: expect.any(String), hasMore: true });
    expect(page.chats.length + page.messages.length).toBe(3);
    for (const m of page.messages)
      expect(Object.keys(m).sort()).toEqual(['agent_ids', 'chat_id', 'chat_title', 'id', 'snippet'].sort());
    for (const c of page.chats) expect(Object.keys(c).sort()).toEqual(['agent_ids', 'id', 'snippet', 'title'].sort());
  });
});

describe('what is searchable (§9.2)', () => {
  const stream = async (chatId: string) =>
    (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true }))
      .body as { id: string };

  it('finds a streamed message once it completes, with its final text only', async () => {
    const chat = await newChat('streams');
    const msg = await stream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'draft okapi words' });
    // A later message proves the index has caught up past the chunk.
    const marker = await say(chat.id, 'marker quokka one');
    await indexed(api, marker.id, 'quokka');
    expect(await messageIdsFor(api, 'okapi')).toEqual([]);
    const done = await api.post(`/api/v1/messages/${msg.id}/complete`, { finalText: 'final narwhal answer' });
    expect(done.status).toBe(200);
    await indexed(api, msg.id, 'narwhal');
    expect(await messageIdsFor(api, 'okapi')).toEqual([]);
  });

  it('never finds a cancelled stream, nor a streaming one', async () => {
    const chat = await newChat('cancelled');
    const cancelled = await stream(chat.id);
    await api.post(`/api/v1/messages/${cancelled.id}/chunks`, { deltaText: 'pangolin partial' });
    expect((await api.post(`/api/v1/messages/${cancelled.id}/cancel`)).status).toBe(200);
    const open = await stream(chat.id);
    await api.post(`/api/v1/messages/${open.id}/chunks`, { deltaText: 'pangolin streaming' });
    const marker = await say(chat.id, 'marker quokka two');
    await indexed(api, marker.id, 'quokka two');
    expect(await messageIdsFor(api, 'pangolin')).toEqual([]);
  });

  it('drops a hit whose message no longer exists, and still fills the page', async () => {
    const chat = await newChat('gone');
    const kept = [await say(chat.id, 'ibex one'), await say(chat.id, 'ibex two')];
    const lost = await say(chat.id, 'ibex three');
    await indexed(api, lost.id, 'ibex');
    // The message is removed behind the index's back (the contract has no delete; a restore could).
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: process.env.TEST_DYNAMODB_ENDPOINT,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    await client.send(new DeleteCommand({ TableName: api.tableName, Key: Keys.messagePointer(lost.id) }));
    const page = (await api.get('/api/v1/search?q=ibex&scope=messages&limit=2')).body;
    expect(page.messages.map((m: { id: string }) => m.id)).toEqual([kept[1]!.id, kept[0]!.id]);
    expect(page.cursor.hasMore).toBe(false);
  });
});
