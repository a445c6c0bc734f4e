/**
 * GET /search (contract §5.7, §9) over real HTTP, with the index written as npm start writes it
 * (the event-log tail feeding core/search.ts): matching, snippets, validation.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { indexed, messageIdsFor, searchAll } from './support.js';

const api = useApi({ config: oneAgentConfig, search: true });

/** Message texts by name; each one goes into its own chat with an unrelated title. */
const TEXTS = {
  cafe: 'Meet at the Café Müller tomorrow',
  fooBar: 'the foo-bar release went out',
  fooDotBar: 'see foo.bar for details',
  barFoo: 'bar then foo reversed',
  fooGapBar: 'foo and then bar later',
  deploy: 'deploy the plan tonight',
  deployment: 'the deployment finished',
  andText: 'foo and more',
  android: 'foo android build',
  fooOnly: 'foo only here',
  orText: 'cats or dogs',
  orange: 'cats orange juice',
  notText: 'alpha notebook keys',
  quoted: 'she said "hello world" twice',
  colon: 'key col:value pair',
  parens: 'function call (gamma) inside',
  version: 'release 2024.1 shipped',
  pi: 'pi is 3.14 roughly',
  cjk: '明日は東京タワーに行きます',
  cyrillic: 'Привет мир, как дела',
  greek: 'Καλημέρα κόσμε',
  html: '<img src=x onerror=alert(1)> hello planet search',
  amp: 'Tom & Jerry\'s "show" <b>now</b> zanzibar',
  long:
    'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen ' +
    'sixteen seventeen eighteen nineteen twenty twentyone needle twentythree twentyfour twentyfive ' +
    'twentysix twentyseven twentyeight twentynine thirty thirtyone thirtytwo thirtythree',
  underscore: 'snake_case_name here',
} as const;
type Name = keyof typeof TEXTS;

const ids = {} as Record<Name, string>;
let archivedChatId = '';
let archivedMessageId = '';

beforeAll(async () => {
  for (const [name, text] of Object.entries(TEXTS) as [Name, string][]) {
    const chat = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title: `chat ${name}` });
    const msg = await api.post(`/api/v1/chats/${chat.body.id}/messages`, {
      role: name === 'deploy' ? 'user' : 'agent',
      senderId: name === 'deploy' ? 'user:primary' : 'assistant',
      content: text,
    });
    expect(msg.status).toBe(201);
    ids[name] = msg.body.id;
  }
  const archived = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title: 'Vault notes' });
  archivedChatId = archived.body.id;
  archivedMessageId = (
    await api.post(`/api/v1/chats/${archivedChatId}/messages`, { role: 'system', content: 'archived xylophone text' })
  ).body.id;
  expect((await api.post(`/api/v1/chats/${archivedChatId}/archive`)).status).toBe(200);
  await indexed(api, archivedMessageId, 'xylophone');
}, 120_000);

const cases: [string, Name[]][] = [
  ['cafe', ['cafe']],
  ['CAFÉ', ['cafe']],
  ['muller', ['cafe']],
  ['foo-bar', ['fooBar', 'fooDotBar']],
  ['foo bar', ['fooBar', 'fooDotBar', 'barFoo', 'fooGapBar']],
  ['bar foo', ['fooBar', 'fooDotBar', 'barFoo', 'fooGapBar']],
  ['"foo-bar"', ['fooBar', 'fooDotBar']],
  ['dep', ['deploy', 'deployment']],
  ['deploy', ['deploy', 'deployment']],
  ['dep plan', []],
  ['plan deploy', ['deploy']],
  ['tonight DEPLOY', ['deploy']],
  ['deploy zebra', []],
  ['"deploy', ['deploy', 'deployment']],
  ['foo AND', ['andText', 'android', 'fooGapBar']],
  ['cats OR', ['orText', 'orange']],
  ['alpha NOT', ['notText']],
  ['NEAR(alpha', []],
  ['*', []],
  ['col:value', ['colon']],
  ['(gamma)', ['parens']],
  ['"hello world"', ['quoted']],
  ['2024', ['version']],
  ['2024.1', ['version']],
  ['3.14', ['pi']],
  ['東京', []],
  ['明日は東京', ['cjk']],
  ['привет', ['cyrillic']],
  ['КАК дела', ['cyrillic']],
  ['καλημέρα', ['greek']],
  ['ΚΌΣΜΕ', ['greek']],
  ['onerror alert', ['html']],
  ['snake_case', ['underscore']],
  ['case_name', ['underscore']],
];

describe('message matching (§9.2)', () => {
  it.each(cases)('q=%j matches exactly its messages', async (q, expected) => {
    const found = await messageIdsFor(api, q);
    expect(found.sort()).toEqual(expected.map((n) => ids[n]).sort());
  });

  it('searches every role, and archived chats', async () => {
    expect(await messageIdsFor(api, 'tonight')).toEqual([ids.deploy]); // a user message
    expect(await messageIdsFor(api, 'xylophone')).toEqual([archivedMessageId]); // system, archived chat
  });

  it("carries the chat's title and agent ids on a message hit", async () => {
    const res = await api.get('/api/v1/search?q=zanzibar&scope=messages');
    expect(res.body.messages).toEqual([
      {
        id: ids.amp,
        chat_id: expect.any(String),
        chat_title: 'chat amp',
        snippet: expect.any(String),
        agent_ids: ['assistant'],
      },
    ]);
    expect(res.body.chats).toEqual([]);
  });
});

describe('snippets (§9.3)', () => {
  const snippetFor = async (q: string) =>
    (await api.get(`/api/v1/search?scope=messages&q=${encodeURIComponent(q)}`)).body.messages[0].snippet as string;

  it('HTML-escapes the text and marks the matched token', async () => {
    const snippet = await snippetFor('planet');
    expect(snippet).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(snippet).toContain('<mark>planet</mark>');
    expect(snippet).not.toContain('<img');
    expect(snippet.replace(/<\/?mark>/g, '')).not.toMatch(/[<>]/);
  });

  it('escapes &, quotes and apostrophes', async () => {
    expect(await snippetFor('zanzibar')).toBe(
      'Tom &amp; Jerry&#39;s &quot;show&quot; &lt;b&gt;now&lt;/b&gt; <mark>zanzibar</mark>',
    );
  });

  it('marks matches case- and diacritic-folded, keeping the original text', async () => {
    expect(await snippetFor('cafe muller')).toBe('Meet at the <mark>Café</mark> <mark>Müller</mark> tomorrow');
  });

  it('cuts a long text to about 20 tokens around the match, with … at the cuts', async () => {
    const snippet = await snippetFor('needle');
    expect(snippet).toContain('<mark>needle</mark>');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
    const tokens = snippet.replace(/<\/?mark>/g, '').match(/[\p{L}\p{N}]+/gu) ?? [];
    expect(tokens.length).toBeGreaterThanOrEqual(15);
    expect(tokens.length).toBeLessThanOrEqual(25);
  });
});

describe('validation (§5.7)', () => {
  it.each([
    ['', 'q'],
    ['q=', 'q'],
    ['q=%20%20%20', 'q'],
    ['q=x&scope=everything', 'scope'],
    ['q=x&limit=0', 'limit'],
    ['q=x&limit=101', 'limit'],
    ['q=x&limit=ten', 'limit'],
  ])('?%s is a schema error on %s', async (query, field) => {
    const res = await api.get(`/api/v1/search?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fieldErrors[field]).toBeDefined();
  });

  it.each(['garbage', 'eyJsIjoiY2hhdHMifQ.AAAA', ''])('cursor %j is 400 Invalid cursor value.', async (cursor) => {
    const res = await api.get(`/api/v1/search?q=foo&cursor=${encodeURIComponent(cursor || 'x.y')}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Invalid cursor value.',
      details: { field: 'cursor' },
    });
  });

  it("refuses another list's cursor", async () => {
    for (let i = 0; i < 2; i++) await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' });
    const chats = await api.get('/api/v1/chats?limit=1');
    expect(chats.body.cursor.next).toEqual(expect.any(String));
    const res = await api.get(`/api/v1/search?q=foo&cursor=${encodeURIComponent(chats.body.cursor.next)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Invalid cursor value.');
  });

  it('answers 200 with nothing for operators and quotes alone', async () => {
    for (const q of ['AND', 'OR NOT', '"', '*', '()', 'NEAR(', ':']) {
      const res = await api.get(`/api/v1/search?scope=all&q=${encodeURIComponent(q)}`);
      expect(res.status).toBe(200);
      expect(res.body.cursor).toEqual({ next: null, hasMore: false });
    }
  });
});

describe('scopes (§9.1, §9.4)', () => {
  it('searches titles only by default, case-insensitively, archived chats included', async () => {
    const res = await api.get('/api/v1/search?q=VAULT');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      chats: [{ id: archivedChatId, title: 'Vault notes', snippet: 'Vault notes', agent_ids: ['assistant'] }],
      messages: [],
      cursor: { next: null, hasMore: false },
    });
    // The message text matches too, but the default scope is titles.
    expect((await api.get('/api/v1/search?q=xylophone')).body.messages).toEqual([]);
  });

  it('scope=messages leaves chats empty; scope=all has both', async () => {
    const messages = await searchAll(api, 'cafe', 'messages');
    expect(messages.chats).toEqual([]);
    expect(messages.messages.map((m) => m.id)).toEqual([ids.cafe]);
    const both = await searchAll(api, 'chat cafe', 'all');
    expect(both.chats.map((c) => c.title)).toEqual(['chat cafe']);
  });
});
