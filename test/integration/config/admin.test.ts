/**
 * PATCH /config/admin (contract §5.2.2, §12.3): each field, rawConfig, every validation rule with
 * nothing saved, secrets never returned, concurrent changes, and a second runtime (another
 * process on the same table, as another Lambda instance) seeing the change within its cache bound.
 */
import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { Keys } from '../../../functions/store/keys.js';
import { useApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';

const BASE = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '', defaultModelId: 'm' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config: BASE, env: { CONFIG_CACHE_MS: '1000' } });
const SECRET = 'og_admin-secret-0123456789abcdef';
const bearer = { headers: { authorization: `Bearer ${SECRET}` } };

const db = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    endpoint: process.env.TEST_DYNAMODB_ENDPOINT,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
);
const STORED = Keys.setting('admin-config');
const storedDocument = async () => {
  const out = await db.send(new GetCommand({ TableName: api.tableName, Key: STORED, ConsistentRead: true }));
  return out.Item ? (JSON.parse(String(out.Item.document)) as Record<string, any>) : undefined;
};
const patch = (body: unknown) => api.patch('/api/v1/config/admin', body, bearer);
const config = async () => (await api.get('/api/v1/config', bearer)).body;

beforeEach(async () => {
  // Every test starts from the deployed configuration, with nothing stored.
  await db.send(new DeleteCommand({ TableName: api.tableName, Key: STORED }));
  const { forgetConfigCacheForTests } = await import('../../../functions/core/instance-config.js');
  forgetConfigCacheForTests();
});

describe('fields (§5.2.2)', () => {
  it('agents replace the list; an unknown defaultModelId gets a stub model when models are not given', async () => {
    const agents = [
      { id: 'coder', name: 'Coder', description: 'c', defaultModelId: 'big' },
      { id: 'writer', name: 'Writer', description: 'w', defaultModelId: 'big' },
      { id: 'plain', name: 'Plain', description: 'p', defaultModelId: 'm' },
    ];
    expect((await patch({ agents })).body).toEqual({ ok: true });
    const c = await config();
    expect(c.agents).toEqual(agents);
    expect(c.models).toEqual([
      { id: 'm', name: 'M', description: '' },
      { id: 'big', name: 'big', description: '' },
    ]);
    // The change is live: a chat with the new agent and the stub model can be created.
    expect((await api.post('/api/v1/chats', { agentIds: ['coder'], modelId: 'big' }, bearer)).status).toBe(201);
  });

  it('agents with models given add no stub: an unknown defaultModelId is a validation error', async () => {
    const res = await patch({
      agents: [{ id: 'a', name: 'A', description: '', defaultModelId: 'nope' }],
      models: [{ id: 'm', name: 'M', description: '' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^Config validation error: /);
    expect(await storedDocument()).toBeUndefined();
  });

  it('models replace the list and drop defaultModelIdForNewChats', async () => {
    await patch({ rawConfig: { ...BASE, defaultModelIdForNewChats: 'm' } });
    expect((await config()).defaultModelIdForNewChats).toBe('m');
    const models = [
      { id: 'm', name: 'M2', description: 'x' },
      { id: 'n', name: 'N', description: '', metadata: { tier: 'cheap' } },
    ];
    expect((await patch({ models })).status).toBe(200);
    const c = await config();
    expect(c.models).toEqual(models);
    expect('defaultModelIdForNewChats' in c).toBe(false);
  });

  it('security is merged and takes effect on the very next request; the secret is never returned', async () => {
    expect((await patch({ security: { instanceSecretEnabled: true, instanceSecret: SECRET } })).body).toEqual({
      ok: true,
    });
    const unauthorized = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' });
    expect(unauthorized.status).toBe(401);
    expect((await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, bearer)).status).toBe(201);
    // Merged, not replaced: the read toggle is still there, now turned on by a second change.
    await patch({ security: { readEndpointsRequireInstanceSecret: true } });
    expect((await api.get('/api/v1/chats')).status).toBe(401);
    const res = await api.get('/api/v1/config', bearer);
    expect(res.body.security).toEqual({ instanceSecretEnabled: true, readEndpointsRequireInstanceSecret: true });
    expect(res.text).not.toContain(SECRET);
    // And off again: the stored document still holds the secret, requests no longer need it.
    await patch({ security: { instanceSecretEnabled: false, readEndpointsRequireInstanceSecret: false } });
    expect((await api.get('/api/v1/chats')).status).toBe(200);
    expect((await storedDocument())?.security.instanceSecret).toBe(SECRET);
  });

  it('autoRename: merged, its key kept unless given, "" removes the key, null removes it all', async () => {
    const on = { enabled: true, provider: 'anthropic', modelId: 'claude-haiku-4-5', apiKey: 'sk-ant-SECRETKEY' };
    await patch({ autoRename: on });
    let c = await api.get('/api/v1/config', bearer);
    expect(c.body.autoRename).toEqual({
      enabled: true,
      provider: 'anthropic',
      modelId: 'claude-haiku-4-5',
      hasApiKey: true,
    });
    expect(c.text).not.toContain('SECRETKEY');
    await patch({ autoRename: { modelId: 'other-model' } });
    expect((await config()).autoRename).toMatchObject({ modelId: 'other-model', hasApiKey: true });
    expect((await storedDocument())?.autoRename.apiKey).toBe('sk-ant-SECRETKEY');
    await patch({ autoRename: { apiKey: '' } });
    expect((await config()).autoRename).toMatchObject({ provider: 'anthropic', hasApiKey: false });
    await patch({ autoRename: null });
    c = await api.get('/api/v1/config', bearer);
    expect(c.body.autoRename).toBeNull();
  });

  it('rawConfig replaces everything, wins over the other fields, and keeps unknown keys as given', async () => {
    const raw = {
      appName: 'Relay',
      agents: [{ id: 'solo', name: 'Solo', description: '', extra: { x: 1 } }],
      models: [{ id: 'only', name: 'Only', description: '' }],
      futureSetting: { nested: [1, 2] },
    };
    expect((await patch({ rawConfig: raw, appName: 'ignored', agents: [] })).status).toBe(200);
    const c = await config();
    expect([c.appName, c.agents.map((a: { id: string }) => a.id), c.models]).toEqual([
      'Relay',
      ['solo'],
      [{ id: 'only', name: 'Only', description: '' }],
    ]);
    expect(await storedDocument()).toEqual(raw);
    // A later field change keeps the unknown keys.
    await patch({ security: { readEndpointsRequireInstanceSecret: false } });
    expect((await storedDocument())?.futureSetting).toEqual({ nested: [1, 2] });
  });

  it('ignores unknown top-level fields, also in an Idempotency-Key fingerprint (§1.2, §1.10)', async () => {
    const keyed = (body: unknown) =>
      api.patch('/api/v1/config/admin', body, { headers: { ...bearer.headers, 'idempotency-key': 'admin-unknown' } });
    const change = { security: { readEndpointsRequireInstanceSecret: false } };
    expect((await keyed(change)).status).toBe(200);
    // The same change with an unknown field: the first answer replayed, not a 409.
    const again = await keyed({ ...change, unknownField: 1, appName: 'ignored' });
    expect([again.status, again.body]).toEqual([200, { ok: true }]);
    expect((await storedDocument())?.appName).toBeUndefined();
  });

  it('turns push on at run time with the instance key pair (never returning its private half)', async () => {
    expect(
      (await patch({ rawConfig: { ...BASE, push: { enabled: true, subject: 'mailto:ops@example.com' } } })).status,
    ).toBe(200);
    const res = await api.get('/api/v1/config', bearer);
    expect(res.body.push).toEqual({
      enabled: true,
      vapidPublicKey: process.env.VAPID_PUBLIC_KEY,
      subject: 'mailto:ops@example.com',
    });
    expect(process.env.VAPID_PUBLIC_KEY).toMatch(/^[A-Za-z0-9_-]{80,}$/);
    expect(res.text).not.toContain('vapidPrivateKey');
  });

  it.each([null, [], 'text', 3])('rawConfig %j is 400 "rawConfig must be a JSON object"', async (rawConfig) => {
    const res = await patch({ rawConfig });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'rawConfig must be a JSON object',
      details: null,
    });
    expect(await storedDocument()).toBeUndefined();
  });
});

describe('the settings extension: defaultModelIdForNewChats, push, hooks (docs/divergences.md "Settings without rawConfig")', () => {
  const MODELS = [
    { id: 'm', name: 'M', description: '' },
    { id: 'n', name: 'N', description: '' },
  ];

  it('defaultModelIdForNewChats is set, survives a models change that gives it too, and null removes it', async () => {
    expect((await patch({ models: MODELS, defaultModelIdForNewChats: 'n' })).status).toBe(200);
    expect((await config()).defaultModelIdForNewChats).toBe('n');
    expect((await patch({ defaultModelIdForNewChats: 'm' })).status).toBe(200);
    expect((await config()).defaultModelIdForNewChats).toBe('m');
    // A new chat without a model takes it (the UI preselects it; the API's own default is §5.3.1's).
    expect((await patch({ defaultModelIdForNewChats: null })).status).toBe(200);
    expect((await config()).defaultModelIdForNewChats).toBeUndefined();
    expect((await storedDocument())?.models).toEqual(MODELS);
  });

  it('an unknown defaultModelIdForNewChats is 400 and saves nothing', async () => {
    const res = await patch({ defaultModelIdForNewChats: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(
      'Config validation error: defaultModelIdForNewChats must match a configured model id.',
    );
    expect(await storedDocument()).toBeUndefined();
  });

  it('push takes enabled and subject only (the key pair stays the service’s), merged into the stored push', async () => {
    const res = await patch({
      push: { enabled: true, subject: 'mailto:ops@example.com', vapidPrivateKey: 'mine', vapidPublicKey: 'mine' },
    });
    expect(res.status).toBe(200);
    expect((await storedDocument())?.push).toEqual({ enabled: true, subject: 'mailto:ops@example.com' });
    expect((await config()).push).toEqual({
      enabled: true,
      vapidPublicKey: process.env.VAPID_PUBLIC_KEY,
      subject: 'mailto:ops@example.com',
    });
    expect((await patch({ push: { enabled: false } })).status).toBe(200);
    expect((await storedDocument())?.push).toEqual({ enabled: false, subject: 'mailto:ops@example.com' });
    const bad = await patch({ push: { enabled: true, subject: 'mailto:me@localhost' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe('Config validation error: push.subject must not contain localhost.');
    expect((await storedDocument())?.push).toEqual({ enabled: false, subject: 'mailto:ops@example.com' });
  });

  it('hooks replace the list; a hook without signingSecret or headers keeps those stored for its url', async () => {
    const a = 'https://a.example/hook';
    const b = 'https://b.example/hook';
    await patch({
      hooks: [
        { url: a, events: ['chat.created'], signingSecret: 'sign-a', headers: { 'x-key': 'hdr-a' } },
        { url: b, events: ['message.created'], signingSecret: 'sign-b' },
      ],
    });
    // The screen sends back what it read (no secrets), reordered, with b's events changed.
    const res = await patch({
      hooks: [
        { url: b, events: ['message.created', 'chat.updated'], timeoutMs: 2000, maxRetries: 1 },
        { url: a, events: ['chat.created'], timeoutMs: 5000, maxRetries: 3 },
      ],
    });
    expect(res.status).toBe(200);
    expect((await storedDocument())?.hooks).toEqual([
      { url: b, events: ['message.created', 'chat.updated'], timeoutMs: 2000, maxRetries: 1, signingSecret: 'sign-b' },
      {
        url: a,
        events: ['chat.created'],
        timeoutMs: 5000,
        maxRetries: 3,
        signingSecret: 'sign-a',
        headers: { 'x-key': 'hdr-a' },
      },
    ]);
    const read = await api.get('/api/v1/config', bearer);
    expect(read.body.hooks).toEqual([
      {
        url: b,
        events: ['message.created', 'chat.updated'],
        timeoutMs: 2000,
        maxRetries: 1,
        hasSigningSecret: true,
        hasHeaders: false,
      },
      { url: a, events: ['chat.created'], timeoutMs: 5000, maxRetries: 3, hasSigningSecret: true, hasHeaders: true },
    ]);
    for (const secret of ['sign-a', 'sign-b', 'hdr-a']) expect(read.text).not.toContain(secret);
    // "" removes a secret, {} the headers, a new value replaces; a changed url keeps nothing.
    await patch({
      hooks: [
        { url: a, events: ['chat.created'], signingSecret: '', headers: {} },
        { url: 'https://c.example/hook', events: ['chat.created'] },
        { url: b, events: ['chat.created'], signingSecret: 'sign-b2' },
      ],
    });
    expect((await storedDocument())?.hooks).toEqual([
      { url: a, events: ['chat.created'], headers: {} },
      { url: 'https://c.example/hook', events: ['chat.created'] },
      { url: b, events: ['chat.created'], signingSecret: 'sign-b2' },
    ]);
  });

  it('a hook without a url is 400 naming it, and saves nothing', async () => {
    const res = await patch({ hooks: [{ url: '', events: ['chat.created'] }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^Config validation error: hooks\.0\.url: /);
    expect(await storedDocument()).toBeUndefined();
  });
});

describe('validation (§12.3): 400, details null, nothing saved', () => {
  const raw = (changes: Record<string, unknown>) => ({ rawConfig: { ...BASE, ...changes } });
  const dispatch = (d: Record<string, unknown>) => raw({ server: { dispatch: d } });
  it.each([
    ['no model', { models: [] }],
    ['no agent', { agents: [] }],
    ['unknown defaultModelIdForNewChats', raw({ defaultModelIdForNewChats: 'x' })],
    ['unknown agent defaultModelId', raw({ agents: [{ id: 'a', name: 'A', description: '', defaultModelId: 'x' }] })],
    ['secret enabled without a secret', { security: { instanceSecretEnabled: true, instanceSecret: '' } }],
    ['a localhost push subject', raw({ push: { enabled: true, subject: 'mailto:me@localhost' } })],
    ['idempotencyTtlSeconds 0', raw({ server: { idempotencyTtlSeconds: 0 } })],
    ['a CORS origin with a path', raw({ server: { corsOrigins: ['https://a.example/path'] } })],
    ['a blank CORS origin', raw({ server: { corsOrigins: [' '] } })],
    ['an unknown dispatch mode', dispatch({ mode: 'fastest' })],
    ['a negative batchDebounceMs', dispatch({ batchDebounceMs: -1 })],
    ['a fractional leaseMs', dispatch({ leaseMs: 1.5 })],
    ['maxAttempts 0', dispatch({ maxAttempts: 0 })],
    ['autoscaleEnabled not a boolean', dispatch({ execution: { autoscaleEnabled: 'yes' } })],
    ['minConcurrency 0', dispatch({ execution: { minConcurrency: 0 } })],
    ['maxConcurrency below minConcurrency', dispatch({ execution: { minConcurrency: 4, maxConcurrency: 3 } })],
    ['claimManyLimit 0', dispatch({ claim: { claimManyLimit: 0 } })],
    ['auto-rename with an unknown provider', { autoRename: { enabled: true, provider: 'acme', modelId: 'x' } }],
    ['auto-rename without a model', { autoRename: { enabled: true, provider: 'openai', modelId: '' } }],
  ])('%s', async (_name, body) => {
    const before = (await api.get('/api/v1/config')).text;
    const res = await patch(body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.message).toMatch(/^Config validation error: \S/);
    expect(res.body.error.details).toBeNull();
    expect(await storedDocument()).toBeUndefined();
    expect((await api.get('/api/v1/config')).text).toBe(before);
  });
});

describe('concurrent changes', () => {
  it('lose none of each other’s fields', async () => {
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([
        patch({ security: { readEndpointsRequireInstanceSecret: round % 2 === 0 } }),
        patch({ autoRename: { enabled: false, provider: 'openai', modelId: `model-${round}` } }),
        patch({ models: [{ id: 'm', name: `M${round}`, description: '' }] }),
        patch({ agents: [{ id: 'assistant', name: `Assistant ${round}`, description: '', defaultModelId: 'm' }] }),
      ]);
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const c = await config();
      expect([
        c.security.readEndpointsRequireInstanceSecret,
        c.autoRename.modelId,
        c.models[0].name,
        c.agents[0].name,
      ]).toEqual([round % 2 === 0, `model-${round}`, `M${round}`, `Assistant ${round}`]);
    }
  });
});

describe('another instance', () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill('SIGKILL');
  });

  it('sees the change within its cache bound (CONFIG_CACHE_MS = 1 s)', async () => {
    const script = fileURLToPath(new URL('../../bench/child-server.ts', import.meta.url));
    child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: { ...process.env, CONFIG_CACHE_MS: '1000', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((ok, fail) => {
      // Kept: a guard that fails the wait for the child's first line, not a pause.
      const timer = setTimeout(() => fail(new Error('second runtime did not start')), 60_000);
      createInterface({ input: child!.stdout! }).once('line', (line) => {
        clearTimeout(timer);
        ok(String(JSON.parse(line).url));
      });
    });
    const appName = async () => ((await (await fetch(`${url}/api/v1/config`)).json()) as { appName: string }).appName;
    expect(await appName()).toBe('OpenGram');
    await patch({ rawConfig: { ...BASE, appName: 'Changed' } });
    const changed = Date.now();
    await eventually(appName, (name) => name === 'Changed', {
      timeoutMs: 5_000,
      intervalMs: 50,
      what: 'the second runtime to see the change',
    });
    // The bound is the cache time; the rest is the polling requests' own time on a loaded machine.
    expect(Date.now() - changed).toBeLessThanOrEqual(1_000 + 1_000);
  });
});
