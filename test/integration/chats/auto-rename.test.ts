/**
 * Auto-rename (contract §10) as `npm start` runs it: the local tail of the event log hands each
 * finalized agent message to core/auto-rename.ts, which calls a fake provider on loopback. The
 * fake checks the exact request of every provider's adapter; the tests cover the triggers and
 * non-triggers, each condition of §10.2, the context and title rules of §10.4, the write (as
 * PATCH with titleAutoRenamed: true, with its chat.updated event), that a title set meanwhile is
 * never overwritten (a PATCH between the rename's read and its commit: auto-rename-race.test.ts),
 * and that failures never reach the triggering request.
 */
import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import { PROVIDER_IDS, replyOf, startFakeProvider } from '../../support/fake-provider.js';
import type { FakeProvider, RecordedRequest } from '../../support/fake-provider.js';
import { sleep } from '../../support/shapes.js';
import { renameForEvent } from '../../../functions/core/auto-rename.js';
import { withUsage } from '../../../functions/platform/usage.js';
import { eventually } from '../../support/wait.js';

/**
 * The provider call's timeout: well above what a loaded machine's message POST takes (over 1 s
 * seen), so that a rename made inline with the POST (which would wait it out) tells apart.
 */
const TIMEOUT_MS = 2500;
const base = {
  agents: [{ id: 'ada', name: 'Ada', description: '' }],
  models: [{ id: 'm', name: 'Model', description: '' }],
};
const MODELS: Record<string, string> = {
  anthropic: 'claude-haiku-4-5',
  openai: 'gpt-5.4-nano',
  google: 'gemini-2.5-flash-lite',
  xai: 'grok-4-1-fast-reasoning',
  openrouter: 'openai/gpt-5.4-nano',
};
const ENV_VARS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'XAI_API_KEY'];

let fake: FakeProvider;
const api = useApi(async () => {
  fake = await startFakeProvider();
  return {
    config: base,
    env: { AUTO_RENAME_BASE_URLS: JSON.stringify(fake.baseUrls), AUTO_RENAME_TIMEOUT_MS: String(TIMEOUT_MS) },
  };
});
afterAll(async () => fake?.close());
beforeEach(() => {
  fake.reset();
  renameWith('openai');
});

/** Auto-rename on, with `provider`, its model and a stored key (unless `apiKey` is given as undefined). */
function renameWith(provider: string, settings: Record<string, unknown> = {}, config: Record<string, unknown> = {}) {
  api.setConfig({
    ...base,
    ...config,
    autoRename: { enabled: true, provider, modelId: MODELS[provider], apiKey: `key-${provider}`, ...settings },
  });
}

const LISBON = 'Can you help me plan a three day trip to Lisbon in May?';

const newChat = async (firstMessage?: string, extra: Record<string, unknown> = {}) => {
  const res = await api.post('/api/v1/chats', { agentIds: ['ada'], modelId: 'm', firstMessage, ...extra });
  expect(res.status).toBe(201);
  return res.body as { id: string; title: string; title_source: string; updated_at: string };
};
const post = async (chatId: string, body: Record<string, unknown>) => {
  const res = await api.post(`/api/v1/chats/${chatId}/messages`, body);
  expect(res.status).toBe(201);
  return res.body as { id: string };
};
const agentSays = (chatId: string, content: string) => post(chatId, { role: 'agent', senderId: 'ada', content });
const userSays = (chatId: string, content: string) => post(chatId, { role: 'user', content });
const getChat = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}`)).body;

/** Polls the chat until its title_source is `auto` (or fails after 5 s). */
const renamed = (chatId: string) =>
  eventually(
    () => getChat(chatId),
    (chat) => chat.title_source === 'auto',
    { timeoutMs: 5000, intervalMs: 50, what: `chat ${chatId} renamed` },
  );

/** The context line of the chat's first message, as the request carries it. */
const contextOf = (request: RecordedRequest): string => {
  const b = request.body;
  return b.messages?.at(-1)?.content ?? b.contents?.[0]?.parts?.[0]?.text;
};

/**
 * Nothing was sent for what happened before: a sentinel chat's rename goes through the same
 * tail after the events under test, so any request they caused arrived before the sentinel's.
 */
async function nothingRequested() {
  const sentinel = await newChat('Sentinel conversation about nothing in particular at all');
  await agentSays(sentinel.id, 'ok');
  await renamed(sentinel.id);
  // Kept: an absence (no request after the sentinel's), observable only by waiting.
  await sleep(300);
  expect(fake.requests.map(contextOf)).toEqual([
    'User: Sentinel conversation about nothing in particular at all\nAssistant: ok',
  ]);
}

/** §10.4's instruction, by its rules rather than its wording. */
function expectTitleInstruction(system: string) {
  expect(system).toMatch(/title generator/i);
  expect(system).toMatch(/3 to 7 words/);
  expect(system).toMatch(/no quotes/i);
  expect(system).toMatch(/no trailing punctuation/i);
  expect(system).toMatch(/never answer/i);
}

describe('auto-rename through each provider (§10.3)', () => {
  const CONTEXT = `User: ${LISBON}\nAssistant: Sure, here is a plan.`;
  /** The request each adapter must send, written out per provider. */
  const expected: Record<
    string,
    (key: string, model: string) => { path: string; headers: Record<string, string>; body: Record<string, unknown> }
  > = {
    anthropic: (key, model) => ({
      path: '/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model, max_tokens: 1000, temperature: 0.2, messages: [{ role: 'user', content: CONTEXT }] },
    }),
    openai: (key, model) => ({
      path: '/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: { model, max_completion_tokens: 1000 },
    }),
    google: (key, model) => ({
      path: `/models/${model}:generateContent?key=${key}`,
      headers: { 'content-type': 'application/json' },
      body: { contents: [{ role: 'user', parts: [{ text: CONTEXT }] }], generationConfig: { maxOutputTokens: 1000 } },
    }),
    xai: (key, model) => ({
      path: '/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: { model, max_completion_tokens: 1000 },
    }),
    openrouter: (key, model) => ({
      path: '/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: { model, max_tokens: 1000 },
    }),
  };

  it.each(PROVIDER_IDS)(
    '%s: sends the exact request, applies the title (auto) and emits chat.updated',
    async (provider) => {
      renameWith(provider);
      fake.title = `  ${provider} Lisbon trip plan  `;
      const chat = await newChat(LISBON);
      await agentSays(chat.id, 'Sure, here is a plan.');
      const after = await renamed(chat.id);
      expect(after).toMatchObject({ title: `${provider} Lisbon trip plan`, title_source: 'auto' });
      expect(after.updated_at > chat.updated_at).toBe(true);

      expect(fake.requests).toHaveLength(1);
      const request = fake.requests[0]!;
      const want = expected[provider]!(`key-${provider}`, MODELS[provider]!);
      expect(request).toMatchObject({ provider, method: 'POST', path: want.path, body: want.body });
      expect(request.headers).toMatchObject(want.headers);
      const keyHeaders = ['x-api-key', 'authorization', 'x-goog-api-key'].filter((h) => !(h in want.headers));
      expect(keyHeaders.map((h) => request.headers[h])).toEqual(keyHeaders.map(() => undefined));
      // The instruction and the conversation, where each API shape puts them; nothing else in the body.
      const b = request.body;
      if (provider === 'anthropic') {
        expect(Object.keys(b).sort()).toEqual(['max_tokens', 'messages', 'model', 'system', 'temperature']);
        expectTitleInstruction(b.system);
      } else if (provider === 'google') {
        expect(Object.keys(b).sort()).toEqual(['contents', 'generationConfig', 'systemInstruction']);
        expect(b.systemInstruction.parts).toHaveLength(1);
        expectTitleInstruction(b.systemInstruction.parts[0].text);
      } else {
        expect(Object.keys(b).sort()).toEqual(
          ['messages', 'model', provider === 'openrouter' ? 'max_tokens' : 'max_completion_tokens'].sort(),
        );
        expect(b.messages).toEqual([
          { role: 'system', content: expect.any(String) },
          { role: 'user', content: CONTEXT },
        ]);
        expectTitleInstruction(b.messages[0].content);
      }

      const updates = (await readEvents(api.tableName)).filter(
        (e) => e.type === 'chat.updated' && e.payload.chatId === chat.id,
      );
      expect(updates.map((e) => e.payload)).toEqual([{ chatId: chat.id }]);
    },
  );

  it('renames after a completed stream, with the final text as context', async () => {
    const chat = await newChat(LISBON);
    const stream = await post(chat.id, { role: 'agent', senderId: 'ada', streaming: true });
    await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'Day one: ' });
    // Kept: an absence (no rename for an unfinished stream), observable only by waiting.
    await sleep(400);
    expect(fake.requests).toEqual([]);
    expect(
      (await api.post(`/api/v1/messages/${stream.id}/complete`, { finalText: '  Day one: Alfama.  ' })).status,
    ).toBe(200);
    await renamed(chat.id);
    expect(fake.requests.map(contextOf)).toEqual([`User: ${LISBON}\nAssistant: Day one: Alfama.`]);
  });

  it('uses the provider environment variable when no key is stored (Google: its second variable too)', async () => {
    try {
      api.setEnv({ OPENAI_API_KEY: 'env-openai' });
      renameWith('openai', { apiKey: undefined });
      await agentSays((await newChat(LISBON)).id, 'Sure.');
      await fake.waitFor(1);
      expect(fake.requests[0]!.headers.authorization).toBe('Bearer env-openai');

      api.setEnv({ GOOGLE_API_KEY: 'env-google' });
      renameWith('google', { apiKey: undefined });
      await agentSays((await newChat(LISBON)).id, 'Sure.');
      await fake.waitFor(2);
      expect(fake.requests[1]!.path).toBe(`/models/${MODELS.google}:generateContent?key=env-google`);
    } finally {
      api.setEnv(Object.fromEntries(ENV_VARS.map((name) => [name, undefined])));
    }
  });
});

describe('context (§10.2, §10.4)', () => {
  it('takes the first six user/agent messages (no system or tool), each trimmed and cut to 300 characters + …', async () => {
    const long = `${'a'.repeat(299)}bcdef`;
    const chat = await newChat(LISBON);
    await post(chat.id, { role: 'system', content: 'system note' });
    await post(chat.id, { role: 'tool', content: 'tool output' });
    await userSays(chat.id, `  ${long}  `);
    await userSays(chat.id, `${'z'.repeat(300)}`);
    for (const n of [4, 5, 6, 7]) await userSays(chat.id, `message ${n}`);
    await agentSays(chat.id, 'the agent answers last');
    await renamed(chat.id);
    expect(fake.requests.map(contextOf)).toEqual([
      [
        `User: ${LISBON}`,
        `User: ${'a'.repeat(299)}b…`,
        `User: ${'z'.repeat(300)}`,
        'User: message 4',
        'User: message 5',
        'User: message 6',
      ].join('\n'),
    ]);
  });

  it('needs at least 30 characters of trimmed user text among them', async () => {
    await agentSays((await newChat(`   ${'x'.repeat(29)}   `)).id, 'An agent reply that is long enough by itself.');
    const twoParts = await newChat('x'.repeat(15));
    await userSays(twoParts.id, ` ${'y'.repeat(14)} `);
    await agentSays(twoParts.id, 'reply');
    const agentOnly = await newChat();
    await agentSays(agentOnly.id, 'An agent speaking first, at length, with no user text at all.');
    await nothingRequested();

    fake.reset();
    const enough = await newChat('x'.repeat(15));
    await userSays(enough.id, 'y'.repeat(15));
    await agentSays(enough.id, 'reply');
    await renamed(enough.id);
    expect(fake.requests.map(contextOf)).toEqual([
      `User: ${'x'.repeat(15)}\nUser: ${'y'.repeat(15)}\nAssistant: reply`,
    ]);
  });
});

describe('the title (§10.4)', () => {
  it('is the reply trimmed and cut to 48 characters', async () => {
    fake.title = `\n  ${'T'.repeat(47)} ${'U'.repeat(20)}  `;
    const chat = await newChat(LISBON);
    await agentSays(chat.id, 'Sure.');
    expect((await renamed(chat.id)).title).toBe(`${'T'.repeat(47)}`);
  });

  it('is cut to titleMaxChars when that is shorter', async () => {
    renameWith('anthropic', {}, { titleMaxChars: 10 });
    fake.title = 'Lisbon Trip Planning In May';
    const chat = await newChat(LISBON);
    await agentSays(chat.id, 'Sure.');
    expect((await renamed(chat.id)).title).toBe('Lisbon Tri');
  });

  it('is ignored when the reply is empty: nothing changes, no event', async () => {
    fake.title = '   \n ';
    const chat = await newChat(LISBON);
    const eventsBefore = (await readEvents(api.tableName)).length;
    await agentSays(chat.id, 'Sure.');
    await fake.waitFor(1);
    // Kept: an absence (no write after a blank title), observable only by waiting.
    await sleep(300);
    const after = await getChat(chat.id);
    expect(after).toMatchObject({ title: chat.title, title_source: 'default' });
    const appended = (await readEvents(api.tableName)).slice(eventsBefore);
    expect(appended.map((e) => e.type)).toEqual(['message.created']);
  });
});

describe('conditions (§10.2): nothing happens', () => {
  it('for user, system and tool messages, a stream start, a cancelled stream, and typing', async () => {
    const chat = await newChat(LISBON);
    await userSays(chat.id, 'Another user message that is long enough.');
    await post(chat.id, { role: 'system', content: 'system' });
    await post(chat.id, { role: 'tool', content: 'tool' });
    const stream = await post(chat.id, { role: 'agent', senderId: 'ada', streaming: true });
    await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'partial' });
    await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'ada' });
    expect((await api.post(`/api/v1/messages/${stream.id}/cancel`, {})).status).toBe(200);
    await nothingRequested();
    expect((await getChat(chat.id)).title_source).toBe('default');
  });

  it('when auto-rename is disabled, or no key is stored or in the environment', async () => {
    renameWith('openai', { enabled: false });
    const off = await newChat(LISBON);
    await agentSays(off.id, 'Sure.');
    // The local tail reads nothing while auto-rename is off; the check itself refuses too (AWS has no such tail).
    const trigger = (await readEvents(api.tableName)).find(
      (e) => e.type === 'message.created' && e.payload.chatId === off.id && e.payload.role === 'agent',
    )!;
    const { getConfig } = await import('../../../functions/core/instance-config.js');
    expect(await renameForEvent(trigger, await getConfig())).toBe('disabled');
    // The configuration is read when an event is handled: each case waits until the tail is past its
    // events (while off, the tail moves its start to the log's head within a second of a write).
    // Kept (time is the behavior): the tail's move while off, at most once a second.
    await sleep(1500);
    renameWith('xai', { apiKey: undefined });
    await agentSays((await newChat(LISBON)).id, 'Sure.');
    await sleep(800); // kept, as above
    api.setConfig(base);
    await agentSays((await newChat(LISBON)).id, 'Sure.');
    await sleep(1500); // kept, as above
    renameWith('openai');
    await nothingRequested();
  });

  it('for a manual title (at creation or by PATCH) or an auto one (by PATCH)', async () => {
    const created = await newChat(LISBON, { title: 'My own title' });
    const patched = await newChat(LISBON);
    expect((await api.patch(`/api/v1/chats/${patched.id}`, { title: 'Patched' })).status).toBe(200);
    const patchedAuto = await newChat(LISBON);
    const res = await api.patch(`/api/v1/chats/${patchedAuto.id}`, { title: 'Client auto', titleAutoRenamed: true });
    expect(res.body.title_source).toBe('auto');
    for (const chat of [created, patched, patchedAuto]) await agentSays(chat.id, 'Sure.');
    await nothingRequested();
    expect((await getChat(created.id)).title).toBe('My own title');
    expect((await getChat(patched.id)).title).toBe('Patched');
    expect((await getChat(patchedAuto.id)).title).toBe('Client auto');
  });

  it('a second time: a chat is renamed at most once', async () => {
    const chat = await newChat(LISBON);
    await agentSays(chat.id, 'Sure.');
    await renamed(chat.id);
    fake.reset();
    fake.title = 'A different title';
    await agentSays(chat.id, 'More.');
    await nothingRequested();
    expect((await getChat(chat.id)).title).toBe('Fake Title');
  });
});

describe('failures never affect the triggering request (§10.1, §10.4)', () => {
  it.each([
    ['a 500', { status: 500, body: 'down' }],
    ['a reply without text', { body: { choices: [] } }],
    ['a timeout', { delayMs: TIMEOUT_MS + 500 }],
  ])(
    '%s: the message is created at once, the chat keeps its title, and a later message renames it',
    async (_, answer) => {
      fake.answer = () => answer;
      const chat = await newChat(LISBON);
      const started = Date.now();
      await agentSays(chat.id, 'Sure.');
      // Inline, the timed-out case would take the whole timeout.
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS - 500);
      await fake.waitFor(1);
      // Kept (time is the behavior): the failed or timed-out answer, then no write.
      await sleep('delayMs' in answer ? answer.delayMs : 300);
      expect(await getChat(chat.id)).toMatchObject({ title: chat.title, title_source: 'default' });

      fake.answer = (request) => ({ body: replyOf(request.provider, 'Recovered title') });
      await agentSays(chat.id, 'Again.');
      expect((await renamed(chat.id)).title).toBe('Recovered title');
    },
  );
});

describe('a title set while a rename is under way is never overwritten', () => {
  it('a PATCH while the provider is thinking wins', async () => {
    fake.answer = (request) => ({ body: replyOf(request.provider, 'Too late'), delayMs: 500 });
    const chat = await newChat(LISBON);
    await agentSays(chat.id, 'Sure.');
    await fake.waitFor(1);
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Mine' })).status).toBe(200);
    // Kept (time is the behavior): the provider's late answer (500 ms) arrives, then no write.
    await sleep(900);
    expect(await getChat(chat.id)).toMatchObject({ title: 'Mine', title_source: 'manual' });
    const updates = (await readEvents(api.tableName)).filter(
      (e) => e.type === 'chat.updated' && e.payload.chatId === chat.id,
    );
    expect(updates).toHaveLength(1);
  });
});

describe('the stream consumer (AWS)', () => {
  /** A new event item as the table's stream carries it (never written: the local tail does not see it). */
  const record = (n: number, payload: Record<string, unknown>) => ({
    eventID: String(n),
    eventName: 'INSERT' as const,
    dynamodb: {
      NewImage: marshall({
        pk: 'EVT#0',
        sk: `SEQ#${n}`,
        type: 'event',
        seq: 900_000 + n,
        id: `ZZZZZZZZZ${String(n).padStart(12, 'z')}`,
        eventType: 'message.created',
        timestamp: new Date().toISOString(),
        payload,
      }) as never,
      SequenceNumber: String(n),
    },
  });
  const consume = async (records: ReturnType<typeof record>[]) => {
    const { handler } = await import('../../../functions/jobs/event-effects.js');
    const { asInvocation } = await import('../../../local/invocations.js');
    const context = { awsRequestId: 'r', functionName: 'event-effects' } as never;
    return asInvocation(() => handler({ Records: records } as DynamoDBStreamEvent, context));
  };

  it('renames once for a finalized agent message delivered twice, and ignores other records', async () => {
    const chat = await newChat(LISBON);
    // The whole payload, as the service writes it (a payload its type's schema refuses triggers nothing).
    const agent = {
      chatId: chat.id,
      messageId: 'm1',
      role: 'agent',
      senderId: 'ada',
      streamState: 'complete',
      contentFinal: 'Sure.',
      createdAt: new Date().toISOString(),
      trace: null,
    };
    expect(
      await consume([record(1, { ...agent, role: 'user' }), record(2, { ...agent, streamState: 'streaming' })]),
    ).toEqual({
      batchItemFailures: [],
    });
    expect(fake.requests).toEqual([]);
    expect(await consume([record(3, agent)])).toEqual({ batchItemFailures: [] });
    expect(fake.requests.map(contextOf)).toEqual([`User: ${LISBON}`]);
    expect((await getChat(chat.id)).title).toBe('Fake Title');
    expect(await consume([record(4, agent)])).toEqual({ batchItemFailures: [] });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('cost per finalized agent message', () => {
  /** The DynamoDB calls and capacity of one check, the configuration read beforehand (it is cached). */
  async function measured(event: Awaited<ReturnType<typeof readEvents>>[number]) {
    const { getConfig } = await import('../../../functions/core/instance-config.js');
    const config = await getConfig();
    const { usage, result } = withUsage(() => renameForEvent(event, config));
    return { outcome: await result, ...usage };
  }
  const agentEventOf = async (chatId: string) =>
    (await readEvents(api.tableName)).find(
      (e) => e.type === 'message.created' && e.payload.chatId === chatId && e.payload.role === 'agent',
    )!;

  it('is no call while off, one GetItem once renamed, and seven calls for the rename itself', async () => {
    renameWith('openai', { enabled: false });
    const chat = await newChat(LISBON);
    await agentSays(chat.id, 'Sure.');
    const event = await agentEventOf(chat.id);
    expect(await measured(event)).toMatchObject({ outcome: 'disabled', calls: 0, writeUnits: 0 });

    renameWith('openai');
    // Reads: the chat, its first messages; the rewrite's chat, newest two, unread count. Writes: the event
    // number, then one transaction of the chat and chat.updated (DynamoDB Local counts 5 RCU and 9 WCU with the
    // transaction's double rate and the chat's index copies).
    const rename = await measured(event);
    expect(rename).toMatchObject({ outcome: 'renamed', calls: 7 });
    expect(rename.readUnits).toBeLessThanOrEqual(5);
    expect(rename.writeUnits).toBeLessThanOrEqual(10);
    const again = await measured(event);
    expect(again).toMatchObject({ outcome: 'not-default', calls: 1, writeUnits: 0 });
    expect(again.readUnits).toBeLessThanOrEqual(1);
  });
});
