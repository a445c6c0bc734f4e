/**
 * GET /api/v1/chats/{chatId}/messages (contract §5.4.2): newest first, keyset cursor (§1.9),
 * limit 1..200 (default 50), streaming messages with their partial text, and empty cancelled
 * streams hidden (§4.2).
 */
import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { MESSAGE_KEYS, UNKNOWN_ID as UNKNOWN_CHAT } from '../../support/shapes.js';
import { laterMillisecond } from '../../support/wait.js';

const config = {
  agents: [
    { id: 'assistant', name: 'Assistant', description: '' },
    { id: 'coder', name: 'Coder', description: '' },
  ],
  models: [{ id: 'model-a', name: 'A', description: '' }],
};

const api = useApi({ config });

interface Msg {
  id: string;
  chat_id: string;
  created_at: string;
  stream_state: string;
  content_final: string | null;
  content_partial: string | null;
  [key: string]: unknown;
}

const newChat = async () => {
  const res = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a' });
  expect(res.status).toBe(201);
  return res.body;
};
const create = async (chatId: string, body: Record<string, unknown>): Promise<Msg> => {
  const res = await api.post(`/api/v1/chats/${chatId}/messages`, body);
  expect([res.status, res.body?.error]).toEqual([201, undefined]);
  return res.body;
};
const say = (chatId: string, i: number) =>
  create(
    chatId,
    i % 3 === 0
      ? { role: 'user', content: `message ${i}` }
      : { role: 'agent', senderId: i % 2 ? 'assistant' : 'coder', content: `message ${i}` },
  );
const startStream = (chatId: string) => create(chatId, { role: 'agent', senderId: 'assistant', streaming: true });
const page = (chatId: string, query = '') => api.get(`/api/v1/chats/${chatId}/messages${query}`);

/** Creates `count` messages, `concurrency` at a time; returns them in creation-call order. */
async function createMany(chatId: string, count: number, concurrency: number): Promise<Msg[]> {
  const out: Msg[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - start) }, (_, j) => say(chatId, start + j));
    out.push(...(await Promise.all(batch)));
  }
  return out;
}

/** The contract order: created_at desc, then id desc. */
const newestFirst = (a: Msg, b: Msg) =>
  a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;

/** Follows cursor.next until hasMore is false; checks every page's cursor object. */
async function walk(chatId: string, limit: number): Promise<{ items: Msg[]; pages: number[] }> {
  const items: Msg[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 1000; guard++) {
    const query: string = `?limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const res = await page(chatId, query);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['cursor', 'data']);
    items.push(...res.body.data);
    pages.push(res.body.data.length);
    const { next, hasMore } = res.body.cursor;
    if (!hasMore) {
      expect(next).toBeNull();
      return { items, pages };
    }
    expect(typeof next).toBe('string');
    cursor = next;
  }
  throw new Error('the cursor walk did not end');
}

const badCursor = { code: 'VALIDATION_ERROR', message: 'Invalid cursor value.', details: { field: 'cursor' } };

describe('GET /api/v1/chats/{chatId}/messages', () => {
  it("lists newest first with every Message field, only the chat's own messages", async () => {
    const chat = await newChat();
    const other = await newChat();
    const first = await create(chat.id, { role: 'user', content: 'one' });
    await laterMillisecond();
    const second = await create(chat.id, { role: 'agent', senderId: 'assistant', content: 'two', trace: { t: 1 } });
    await laterMillisecond();
    await create(other.id, { role: 'user', content: 'elsewhere' });
    const third = await create(chat.id, { role: 'tool', content: 'three' });
    const res = await page(chat.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [third, second, first], cursor: { next: null, hasMore: false } });
    for (const m of res.body.data) expect(Object.keys(m).sort()).toEqual(MESSAGE_KEYS);
  });

  it('lists an empty chat as an empty page', async () => {
    const chat = await newChat();
    const res = await page(chat.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], cursor: { next: null, hasMore: false } });
  });

  it('breaks created_at ties by id desc', async () => {
    const chat = await newChat();
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => say(chat.id, i)));
    const data: Msg[] = (await page(chat.id, '?limit=200')).body.data;
    expect(data.map((m) => m.id).sort()).toEqual(made.map((m) => m.id).sort());
    expect(data.map((m) => m.id)).toEqual([...made].sort(newestFirst).map((m) => m.id));
  });

  it('answers 404 with {chatId} for an unknown chat', async () => {
    for (const chatId of [UNKNOWN_CHAT, 'no-such-chat']) {
      const res = await page(chatId);
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Chat not found.', details: { chatId } });
    }
  });
});

describe('paging over 500 messages', () => {
  let chatId: string;
  let expected: Msg[];
  beforeAll(async () => {
    chatId = (await newChat()).id;
    const made = await createMany(chatId, 500, 5);
    expected = [...made].sort(newestFirst);
  }, 240_000);

  it('walks every message exactly once, in order, with limit 37', async () => {
    const { items, pages } = await walk(chatId, 37);
    expect(items).toHaveLength(500);
    expect(new Set(items.map((m) => m.id)).size).toBe(500);
    expect(items.map((m) => m.id)).toEqual(expected.map((m) => m.id));
    expect(items).toEqual(expected);
    expect(pages).toEqual([...Array(13).fill(37), 500 - 13 * 37]);
  });

  it('defaults limit to 50 and accepts 1 and 200', async () => {
    const byDefault = await page(chatId);
    expect(byDefault.status).toBe(200);
    expect(byDefault.body.data.map((m: Msg) => m.id)).toEqual(expected.slice(0, 50).map((m) => m.id));
    expect(byDefault.body.cursor.hasMore).toBe(true);
    expect(typeof byDefault.body.cursor.next).toBe('string');
    const next = await page(chatId, `?cursor=${encodeURIComponent(byDefault.body.cursor.next)}`);
    expect(next.body.data.map((m: Msg) => m.id)).toEqual(expected.slice(50, 100).map((m) => m.id));

    const one = await page(chatId, '?limit=1');
    expect(one.body.data.map((m: Msg) => m.id)).toEqual([expected[0]!.id]);
    expect(one.body.cursor.hasMore).toBe(true);
    const max = await page(chatId, '?limit=200');
    expect(max.body.data.map((m: Msg) => m.id)).toEqual(expected.slice(0, 200).map((m) => m.id));
    const { items, pages } = await walk(chatId, 200);
    expect(pages).toEqual([200, 200, 100]);
    expect(items.map((m) => m.id)).toEqual(expected.map((m) => m.id));
  });

  it('rejects limits outside 1..200 or not integers as schema errors', async () => {
    for (const limit of ['0', '201', 'x', '-1', '1.5', '1000']) {
      const res = await page(chatId, `?limit=${limit}`);
      expect([limit, res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([
        limit,
        400,
        'VALIDATION_ERROR',
        'Request validation failed.',
      ]);
      expect(res.body.error.details.fieldErrors).toHaveProperty('limit');
    }
  });

  it('rejects an undecodable or tampered cursor', async () => {
    const valid: string = (await page(chatId, '?limit=5')).body.cursor.next;
    const flipAt = Math.floor(valid.length / 2);
    const flipped = valid.slice(0, flipAt) + (valid[flipAt] === 'A' ? 'B' : 'A') + valid.slice(flipAt + 1);
    const forged = Buffer.from(JSON.stringify({ createdAt: Date.now(), id: expected[10]!.id })).toString('base64url');
    for (const cursor of [
      'garbage',
      '!!!',
      valid.slice(0, flipAt),
      `${valid}x`,
      flipped,
      valid.split('').reverse().join(''),
      forged,
    ]) {
      const res = await page(chatId, `?cursor=${encodeURIComponent(cursor)}`);
      expect([cursor, res.status, res.body?.error]).toEqual([cursor, 400, badCursor]);
    }
  });

  it('rejects a cursor taken from another chat', async () => {
    const other = await newChat();
    await createMany(other.id, 4, 4);
    const foreign: string = (await page(other.id, '?limit=2')).body.cursor.next;
    expect(typeof foreign).toBe('string');
    const res = await page(chatId, `?cursor=${encodeURIComponent(foreign)}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(badCursor);
    // and the cursor still works where it came from
    const home = await page(other.id, `?limit=2&cursor=${encodeURIComponent(foreign)}`);
    expect(home.status).toBe(200);
    expect(home.body.data).toHaveLength(2);
  });

  it('checks the cursor before the chat (§1.14: a rule error before a 404), and a good cursor of a missing chat is a 404', async () => {
    const res = await page('nochat00000000000000x', '?cursor=forged');
    expect([res.status, res.body.error]).toEqual([400, badCursor]);
    // A cursor that decodes names its own chat's list, so another (missing) chat refuses it too.
    const issued: string = (await page(chatId, '?limit=1')).body.cursor.next;
    const elsewhere = await page('nochat00000000000000x', `?cursor=${encodeURIComponent(issued)}`);
    expect([elsewhere.status, elsewhere.body.error]).toEqual([400, badCursor]);
    const missing = await page('nochat00000000000000x', '');
    expect([missing.status, missing.body.error.message]).toEqual([404, 'Chat not found.']);
  });
});

describe('streaming and cancelled messages in the listing', () => {
  it('lists a streaming message with its current partial text', async () => {
    const chat = await newChat();
    const before = await create(chat.id, { role: 'user', content: 'question' });
    await laterMillisecond();
    const stream = await startStream(chat.id);
    let data: Msg[] = (await page(chat.id)).body.data;
    expect(data.map((m) => m.id)).toEqual([stream.id, before.id]);
    expect(data[0]).toMatchObject({ stream_state: 'streaming', content_partial: null, content_final: null });
    expect((await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'Hel' })).status).toBe(200);
    expect((await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'lo ' })).status).toBe(200);
    data = (await page(chat.id)).body.data;
    expect(data[0]).toMatchObject({
      id: stream.id,
      stream_state: 'streaming',
      content_partial: 'Hello ',
      content_final: null,
    });
    expect(Object.keys(data[0]!).sort()).toEqual(MESSAGE_KEYS);
    const done = await api.post(`/api/v1/messages/${stream.id}/complete`, {});
    expect(done.status).toBe(200);
    data = (await page(chat.id)).body.data;
    expect(data[0]).toEqual(done.body);
    expect(data[0]).toMatchObject({ stream_state: 'complete', content_final: 'Hello ', content_partial: null });
  });

  it('hides an empty cancelled stream but keeps a cancelled one with partial text', async () => {
    const chat = await newChat();
    const first = await create(chat.id, { role: 'user', content: 'go' });
    await laterMillisecond();
    const empty = await startStream(chat.id);
    await laterMillisecond();
    const partial = await startStream(chat.id);
    expect((await api.post(`/api/v1/messages/${partial.id}/chunks`, { deltaText: 'half an ans' })).status).toBe(200);
    await laterMillisecond();
    const last = await create(chat.id, { role: 'agent', senderId: 'coder', content: 'after' });
    expect((await page(chat.id)).body.data.map((m: Msg) => m.id)).toEqual([last.id, partial.id, empty.id, first.id]);

    const cancelledEmpty = await api.post(`/api/v1/messages/${empty.id}/cancel`);
    expect(cancelledEmpty.status).toBe(200);
    expect(cancelledEmpty.body).toMatchObject({
      stream_state: 'cancelled',
      content_partial: null,
      content_final: null,
    });
    const cancelledPartial = await api.post(`/api/v1/messages/${partial.id}/cancel`);
    expect(cancelledPartial.status).toBe(200);

    const res = await page(chat.id);
    expect(res.body.data.map((m: Msg) => m.id)).toEqual([last.id, partial.id, first.id]);
    expect(res.body.data[1]).toEqual(cancelledPartial.body);
    expect(res.body.data[1]).toMatchObject({
      stream_state: 'cancelled',
      content_partial: 'half an ans',
      content_final: null,
    });
    expect(res.body.cursor).toEqual({ next: null, hasMore: false });
    // Paging one by one sees the same visible messages, the hidden one on no page.
    const { items } = await walk(chat.id, 1);
    expect(items.map((m) => m.id)).toEqual([last.id, partial.id, first.id]);
  });
});
