/** GET /api/v1/events/stream (§6.4): framing, headers, live delivery, replay, ephemeral events. */
import { afterAll, describe, expect, it } from '@jest/globals';
import { readEvents } from '../../support/events.js';
import { useApi } from '../../support/api.js';
import { connect, jsonOf } from '../../support/sse.js';
import type { SseConnection } from '../../support/sse.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};

const open: SseConnection[] = [];
// Declared before useApi: jest runs afterAll hooks in declaration order, so the streams close first.
afterAll(() => {
  for (const c of open) c.close();
});
const api = useApi({ config });

const stream = async (query = '', headers: Record<string, string> = {}) => {
  const c = await connect(`${api.url}/api/v1/events/stream${query}`, headers);
  open.push(c);
  return c;
};
const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const typesOf = (c: SseConnection) => c.events().map((e) => e.event);

describe('event stream', () => {
  it('answers with the SSE headers, the opening comment and a retry hint', async () => {
    const c = await stream();
    expect(c.status).toBe(200);
    expect(c.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(c.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(c.headers.get('x-accel-buffering')).toBe('no');
    expect(c.headers.get('content-encoding')).toBeNull();
    await c.waitFor((x) => x.frames.length >= 2);
    expect(c.frames.slice(0, 2)).toEqual([
      { kind: 'comment', text: 'stream opened' },
      { kind: 'retry', ms: 1000 },
    ]);
    c.close();
  });

  it('delivers new events live with event/data/id framing, and no history without a cursor', async () => {
    await newChat(); // before the connection: not replayed
    const c = await stream();
    await c.waitFor((x) => x.frames.length >= 2);
    const chat = await newChat();
    await c.waitFor((x) => x.events().some((e) => e.data.payload.chatId === chat.id), 3000);
    const [first] = c.events();
    expect(first!.event).toBe('chat.created');
    expect(first!.data).toEqual({
      id: first!.id,
      type: 'chat.created',
      timestamp: chat.created_at,
      payload: { chatId: chat.id },
    });
    expect(first!.id).toMatch(/^[A-Za-z0-9_-]{21}$/);
    expect(c.events()).toHaveLength(1);
    c.close();
  });

  it('replays every persisted event after a cursor, in order, then continues live', async () => {
    const chat = await newChat();
    await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true });
    await api.post(`/api/v1/chats/${chat.id}/archive`);
    const log = await readEvents(api.tableName);
    const from = log.findIndex((e) => e.type === 'chat.created' && e.payload.chatId === chat.id);
    const c = await stream(`?cursor=${log[from]!.id}&limit=1`);
    const expected = log.slice(from + 1).map((e) => e.id);
    await c.waitFor((x) => x.events().length >= expected.length, 5000);
    expect(c.events().map((e) => e.id)).toEqual(expected);
    await api.post(`/api/v1/chats/${chat.id}/unarchive`);
    await c.waitFor((x) => typesOf(x).includes('chat.unarchived'), 3000);
    expect(new Set(c.events().map((e) => e.id)).size).toBe(c.events().length);
    c.close();
  });

  it('answers 400 JSON for an unknown cursor and for bad query values', async () => {
    const unknown = await jsonOf(`${api.url}/api/v1/events/stream?cursor=AAAAAAAAAAAAAAAAAAAAA`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'cursor event id was not found.',
      details: { field: 'cursor' },
    });
    const badLimit = await jsonOf(`${api.url}/api/v1/events/stream?limit=0`);
    expect(badLimit.status).toBe(400);
    expect(badLimit.body.error.details.fieldErrors.limit).toBeDefined();
    const badEphemeral = await jsonOf(`${api.url}/api/v1/events/stream?ephemeral=yes`);
    expect(badEphemeral.body.error.details.fieldErrors.ephemeral).toBeDefined();
  });

  it('delivers ephemeral events live, and never with ephemeral=false', async () => {
    const chat = await newChat();
    const all = await stream();
    const persistedOnly = await stream('?ephemeral=false');
    await all.waitFor((x) => x.frames.length >= 2);
    await persistedOnly.waitFor((x) => x.frames.length >= 2);
    await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'assistant' });
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    await all.waitFor((x) => typesOf(x).includes('chat.read') && typesOf(x).includes('chat.typing'), 3000);
    await persistedOnly.waitFor((x) => typesOf(x).includes('chat.read'), 3000);
    expect(typesOf(persistedOnly)).toEqual(['chat.read']);
    const typing = all.events().find((e) => e.event === 'chat.typing')!;
    expect(typing.data.payload).toEqual({ chatId: chat.id, agentId: 'assistant' });
    all.close();
    persistedOnly.close();
  });

  it('an ephemeral event id is not a valid cursor, but resumes as Last-Event-ID', async () => {
    const chat = await newChat();
    const c = await stream();
    await c.waitFor((x) => x.frames.length >= 2);
    await api.post(`/api/v1/chats/${chat.id}/mark-unread`);
    await c.waitFor((x) => typesOf(x).includes('chat.unread'), 3000);
    await api.post(`/api/v1/chats/${chat.id}/user-typing`);
    await c.waitFor((x) => typesOf(x).includes('chat.user_typing'), 3000);
    c.close();
    const typingId = c.events().find((e) => e.event === 'chat.user_typing')!.id;
    const asCursor = await jsonOf(`${api.url}/api/v1/events/stream?cursor=${typingId}`);
    expect(asCursor.status).toBe(400);
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    const resumed = await stream('', { 'last-event-id': typingId });
    await resumed.waitFor((x) => typesOf(x).includes('chat.read'), 3000);
    // After the typing event's position: the mark-read only, not the mark-unread before it.
    expect(typesOf(resumed).filter((t) => t.startsWith('chat.'))).toEqual(['chat.read']);
    resumed.close();
    const garbage = await stream('', { 'last-event-id': 'not-an-event-id' });
    expect(garbage.status).toBe(200);
    garbage.close();
  });

  it('streams every chunk of 20 concurrent streams to a connected client, each in order', async () => {
    const c = await stream();
    await c.waitFor((x) => x.frames.length >= 2);
    const chats = await Promise.all(Array.from({ length: 20 }, () => newChat()));
    const messages = await Promise.all(
      chats.map(
        async (chat) =>
          (
            await api.post(`/api/v1/chats/${chat.id}/messages`, {
              role: 'agent',
              senderId: 'assistant',
              streaming: true,
            })
          ).body,
      ),
    );
    const CHUNKS = 10;
    await Promise.all(
      messages.map(async (m) => {
        for (let i = 0; i < CHUNKS; i++) {
          const res = await api.post(`/api/v1/messages/${m.id}/chunks`, { deltaText: `${i};` });
          expect(res.status).toBe(200);
        }
      }),
    );
    const chunksOf = (id: string) =>
      c
        .events()
        .filter((e) => e.event === 'message.streaming.chunk' && e.data.payload.messageId === id)
        .map((e) => e.data.payload.deltaText);
    await c.waitFor(() => messages.every((m) => chunksOf(m.id).length === CHUNKS), 20_000);
    for (const m of messages) expect(chunksOf(m.id)).toEqual(Array.from({ length: CHUNKS }, (_, i) => `${i};`));
    // message.created arrives before the first chunk of its message.
    const order = c.events().map((e) => `${e.event}:${e.data.payload.messageId ?? ''}`);
    for (const m of messages) {
      expect(order.indexOf(`message.created:${m.id}`)).toBeLessThan(order.indexOf(`message.streaming.chunk:${m.id}`));
    }
    c.close();
  }, 150_000);
});
