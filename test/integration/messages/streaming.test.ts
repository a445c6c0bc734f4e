import { describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { sleep } from '../../../functions/platform/retry.js';

const api = useApi({ config: oneAgentConfig });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) => {
  const res = await api.post(`/api/v1/chats/${chatId}/messages`, {
    role: 'agent',
    senderId: 'assistant',
    streaming: true,
  });
  expect(res.status).toBe(201);
  return res.body;
};

/** The two path forms of each streaming operation (§5.4.3–5.4.5). */
const forms = [
  {
    name: '/messages/{id}',
    path: (_chatId: string, messageId: string, op: string) => `/api/v1/messages/${messageId}/${op}`,
  },
  {
    name: '/chats/{chatId}/messages/{id}',
    path: (chatId: string, messageId: string, op: string) => `/api/v1/chats/${chatId}/messages/${messageId}/${op}`,
  },
];

describe.each(forms)('streaming through $name', ({ path }) => {
  it('appends chunks verbatim and returns the accumulated text each time', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    expect(msg).toMatchObject({ stream_state: 'streaming', content_final: null, content_partial: null, model_id: 'm' });
    const first = await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: 'Hello' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: msg.id,
      stream_state: 'streaming',
      content_partial: 'Hello',
      content_final: null,
    });
    const second = await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: ',  ' });
    expect(second.body.content_partial).toBe('Hello,  ');
    expect(second.body.updated_at >= first.body.updated_at).toBe(true);
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data[0];
    expect(listed).toMatchObject({ id: msg.id, stream_state: 'streaming', content_partial: 'Hello,  ' });
  });

  it('completes with finalText verbatim', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: 'draft' });
    const done = await api.post(path(chat.id, msg.id, 'complete'), { finalText: '  Final answer ' });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      stream_state: 'complete',
      content_final: '  Final answer ',
      content_partial: null,
    });
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.last_message_preview).toBe('Final answer');
    expect(after.last_message_role).toBe('agent');
  });

  it('completes with {} using the streamed text', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: 'a' });
    await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: 'b' });
    const done = await api.post(path(chat.id, msg.id, 'complete'), {});
    expect(done.body).toMatchObject({ stream_state: 'complete', content_final: 'ab', content_partial: null });
  });

  it('completes with no body at all, and with "" when nothing was streamed', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const done = await api.request('POST', path(chat.id, msg.id, 'complete'));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ stream_state: 'complete', content_final: '', content_partial: null });
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after.last_message_preview).toBeNull();
  });

  it('cancel keeps the partial text', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(path(chat.id, msg.id, 'chunks'), { deltaText: 'partial ' });
    const res = await api.post(path(chat.id, msg.id, 'cancel'));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ stream_state: 'cancelled', content_partial: 'partial ', content_final: null });
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data;
    expect(listed.map((m: { id: string }) => m.id)).toContain(msg.id);
  });

  it('answers 409 with messageId and streamState to chunk, complete and cancel after complete', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(path(chat.id, msg.id, 'complete'), { finalText: 'done' });
    const before = await readEvents(api.tableName);
    for (const op of ['chunks', 'complete', 'cancel']) {
      const res = await api.post(path(chat.id, msg.id, op), op === 'chunks' ? { deltaText: 'late' } : {});
      expect([op, res.status]).toEqual([op, 409]);
      expect(res.body.error).toEqual({
        code: 'CONFLICT',
        message: 'Message is not in streaming state.',
        details: { messageId: msg.id, streamState: 'complete' },
      });
    }
    expect(await eventsSince(api.tableName, before.length)).toEqual([]);
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data[0];
    expect(listed).toMatchObject({ content_final: 'done', stream_state: 'complete' });
  });
});

describe('streaming rules', () => {
  it('rejects an empty or non-string deltaText', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    for (const body of [{ deltaText: '' }, { deltaText: 3 }, {}]) {
      const res = await api.post(`/api/v1/messages/${msg.id}/chunks`, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        message: 'deltaText must be a non-empty string.',
        details: { field: 'deltaText' },
      });
    }
  });

  it('accepts whitespace-only chunks verbatim', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const res = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: '  \n' });
    expect(res.body.content_partial).toBe('  \n');
  });

  it('complete rejects a non-string finalText, malformed JSON and non-object bodies', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const nul = await api.post(`/api/v1/messages/${msg.id}/complete`, { finalText: null });
    expect(nul.body.error).toMatchObject({ message: 'finalText must be a string.', details: { field: 'finalText' } });
    const bad = await api.post(`/api/v1/messages/${msg.id}/complete`, undefined, {
      raw: '{oops',
      contentType: 'text/plain',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('Invalid JSON body.');
    const arr = await api.post(`/api/v1/messages/${msg.id}/complete`, undefined, { raw: '[1]' });
    expect(arr.body.error.message).toBe('JSON body must be an object.');
    const blank = await api.post(`/api/v1/messages/${msg.id}/complete`, undefined, {
      raw: '   ',
      contentType: 'text/plain',
    });
    expect(blank.status).toBe(200);
  });

  it('answers 404 for unknown messages, and for a message of another chat on the chat-scoped path', async () => {
    const a = await newChat();
    const b = await newChat();
    const msg = await startStream(a.id);
    const unknown = await api.post('/api/v1/messages/AAAAAAAAAAAAAAAAAAAAA/chunks', { deltaText: 'x' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({
      message: 'Message not found.',
      details: { messageId: 'AAAAAAAAAAAAAAAAAAAAA' },
    });
    const wrongChat = await api.post(`/api/v1/chats/${b.id}/messages/${msg.id}/chunks`, { deltaText: 'x' });
    expect(wrongChat.status).toBe(404);
    expect(wrongChat.body.error.details).toEqual({ messageId: msg.id });
    const noChat = await api.post(`/api/v1/chats/BBBBBBBBBBBBBBBBBBBBB/messages/${msg.id}/cancel`);
    expect(noChat.body.error).toMatchObject({
      message: 'Chat not found.',
      details: { chatId: 'BBBBBBBBBBBBBBBBBBBBB' },
    });
    const still = (await api.get(`/api/v1/chats/${a.id}/messages`)).body.data[0];
    expect(still).toMatchObject({ stream_state: 'streaming', content_partial: null });
  });

  it('keeps every one of 100 concurrent chunks, in the order the server numbered them', async () => {
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const parts = Array.from({ length: 100 }, (_, i) => `<${i}>`);
    const results = await Promise.all(
      parts.map((deltaText) => api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText })),
    );
    expect(results.map((r) => r.status)).toEqual(parts.map(() => 200));
    const done = await api.post(`/api/v1/messages/${msg.id}/complete`);
    const text: string = done.body.content_final;
    expect(text.length).toBe(parts.join('').length);
    const seen = text.match(/<\d+>/g) ?? [];
    expect([...seen].sort()).toEqual([...parts].sort());
    // Every response's text is a prefix of the final text (docs/architecture.md "Messages and streaming").
    for (const r of results) expect(text.startsWith(r.body.content_partial ?? '')).toBe(true);
  });

  it.each([
    ['unkeyed', false],
    ['keyed (the reply stored with the chunk)', true],
  ])(
    'answers each of 100 chunks posted 10 at a time, %s, with a prefix of the final text',
    async (_name, keyed) => {
      const chat = await newChat();
      const msg = await startStream(chat.id);
      // Every 10th chunk's write is slow (well inside the 2 s a missing number is waited for),
      // so the chunks numbered after it are answered while it is still missing.
      const slowWrites = 'slow-chunk-writes';
      type Item = { pk?: unknown; seq?: unknown };
      type Input = { Item?: Item; TransactItems?: { Put?: { Item?: Item } }[] };
      const isSlowChunk = (item: Item | undefined) => item?.pk === `MSG#${msg.id}` && Number(item.seq) % 10 === 3;
      ddb().middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as Input;
          const items = [input.Item, ...(input.TransactItems ?? []).map((t) => t.Put?.Item)];
          // Kept (time is the behavior): a slow chunk write, injected.
          if (items.some(isSlowChunk)) await sleep(300);
          return next(args);
        },
        { step: 'initialize', name: slowWrites, priority: 'high' },
      );
      const parts = Array.from({ length: 100 }, (_, i) => `<${i}>`);
      const results: { status: number; body: { content_partial: string | null } }[] = [];
      try {
        let next = 0;
        const worker = async () => {
          while (next < parts.length) {
            const i = next++;
            const headers: Record<string, string> = keyed ? { 'idempotency-key': `${msg.id}-${i}` } : {};
            results[i] = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: parts[i] }, { headers });
          }
        };
        await Promise.all(Array.from({ length: 10 }, worker));
      } finally {
        ddb().middlewareStack.remove(slowWrites);
      }
      expect(results.map((r) => r.status)).toEqual(parts.map(() => 200));
      const done = await api.post(`/api/v1/messages/${msg.id}/complete`);
      const text: string = done.body.content_final;
      expect([...(text.match(/<\d+>/g) ?? [])].sort()).toEqual([...parts].sort());
      const notPrefixes = results
        .map((r, i) => ({ chunk: parts[i], content: r.body.content_partial ?? '' }))
        .filter(({ content }) => !text.startsWith(content));
      expect(notPrefixes).toEqual([]);
      // A response leaves its own chunk out only while a lower-numbered one is missing.
      const withOwn = results.filter((r, i) => (r.body.content_partial ?? '').includes(parts[i]!)).length;
      expect(withOwn).toBeGreaterThan(0);
    },
    60_000,
  );

  it('emits message.created, no persisted event per chunk, then message.streaming.complete', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'x' });
    await api.post(`/api/v1/messages/${msg.id}/complete`, { finalText: 'y' });
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => e.type)).toEqual(['message.created', 'message.streaming.complete']);
    expect(events[0]!.payload).toEqual({
      chatId: chat.id,
      messageId: msg.id,
      role: 'agent',
      senderId: 'assistant',
      streamState: 'streaming',
      contentFinal: null,
      createdAt: msg.created_at,
      trace: null,
    });
    expect(events[1]!.payload).toEqual({
      chatId: chat.id,
      messageId: msg.id,
      role: 'agent',
      streamState: 'complete',
      finalText: 'y',
    });
  });

  it('cancel-streaming cancels every open stream of the chat and reports them', async () => {
    const chat = await newChat();
    const a = await startStream(chat.id);
    const b = await startStream(chat.id);
    const c = await startStream(chat.id);
    await api.post(`/api/v1/messages/${a.id}/chunks`, { deltaText: 'keep me' });
    await api.post(`/api/v1/messages/${c.id}/complete`, { finalText: 'done' });
    const before = (await readEvents(api.tableName)).length;
    const res = await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`);
    expect(res.status).toBe(200);
    expect([...res.body.cancelledMessageIds].sort()).toEqual([a.id, b.id].sort());
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => [e.type, e.payload.streamState, e.payload.finalText])).toEqual([
      ['message.streaming.complete', 'cancelled', null],
      ['message.streaming.complete', 'cancelled', null],
    ]);
    const again = await api.post(`/api/v1/chats/${chat.id}/messages/cancel-streaming`);
    expect(again.body).toEqual({ cancelledMessageIds: [] });
    // b was empty: a cancelled message with no text is hidden from the listing (§5.4.2).
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data.map((m: { id: string }) => m.id);
    expect(listed).toEqual([c.id, a.id]);
    const missing = await api.post('/api/v1/chats/CCCCCCCCCCCCCCCCCCCCC/messages/cancel-streaming');
    expect(missing.status).toBe(404);
  });
});
