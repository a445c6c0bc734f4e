/**
 * POST /api/v1/config/admin/validate-auto-rename (contract §5.2.3) against a fake provider on
 * loopback: the exact one-token request of each provider's adapter, which key is used, and
 * every outcome's answer (provider statuses, timeout, network error), never echoing a key.
 */
import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { PROVIDER_IDS, startFakeProvider } from '../../support/fake-provider.js';
import type { FakeProvider } from '../../support/fake-provider.js';

const PATH = '/api/v1/config/admin/validate-auto-rename';
const TIMEOUT_MS = 1000;
const PROBE_SYSTEM = 'Reply with one word.';

let fake: FakeProvider;
const api = useApi(async () => {
  fake = await startFakeProvider();
  return { env: { AUTO_RENAME_BASE_URLS: JSON.stringify(fake.baseUrls), AUTO_RENAME_TIMEOUT_MS: String(TIMEOUT_MS) } };
});
afterAll(async () => fake?.close());
beforeEach(() => {
  fake.reset();
  api.setConfig({});
  api.setEnv(Object.fromEntries(ENV_VARS.map((name) => [name, undefined])));
});

const ENV_VARS = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'XAI_API_KEY',
  'OPENROUTER_API_KEY',
];

const validate = (body: Record<string, unknown>) => api.post(PATH, body);

function expectRefusal(res: { status: number; body: any }, message: string) {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ error: { code: 'VALIDATION_ERROR', message, details: null } });
}

/** The probe each adapter must send, written out per provider (never derived from the code under test). */
const probes: Record<
  string,
  (key: string, model: string) => { path: string; headers: Record<string, string>; body: Record<string, unknown> }
> = {
  anthropic: (key, model) => ({
    path: '/messages',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: {
      model,
      max_tokens: 1,
      temperature: 0.2,
      system: PROBE_SYSTEM,
      messages: [{ role: 'user', content: 'Hello' }],
    },
  }),
  openai: (key, model) => ({
    path: '/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: {
      model,
      messages: [
        { role: 'system', content: PROBE_SYSTEM },
        { role: 'user', content: 'Hello' },
      ],
      max_completion_tokens: 1,
    },
  }),
  google: (key, model) => ({
    path: `/models/${model}:generateContent?key=${key}`,
    headers: { 'content-type': 'application/json' },
    body: {
      systemInstruction: { parts: [{ text: PROBE_SYSTEM }] },
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      generationConfig: { maxOutputTokens: 1 },
    },
  }),
  xai: (key, model) => ({
    path: '/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: {
      model,
      messages: [
        { role: 'system', content: PROBE_SYSTEM },
        { role: 'user', content: 'Hello' },
      ],
      max_completion_tokens: 1,
    },
  }),
  openrouter: (key, model) => ({
    path: '/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: {
      model,
      messages: [
        { role: 'system', content: PROBE_SYSTEM },
        { role: 'user', content: 'Hello' },
      ],
      max_tokens: 1,
    },
  }),
};
const MODELS: Record<string, string> = {
  anthropic: 'claude-haiku-4-5',
  openai: 'gpt-5.4-nano',
  google: 'gemini-2.5-flash-lite',
  xai: 'grok-4-1-fast-non-reasoning',
  openrouter: 'anthropic/claude-haiku-4.5',
};
/** Headers that carry a key in one shape or another: only the expected one may be present. */
const KEY_HEADERS = ['x-api-key', 'authorization', 'x-goog-api-key'];

describe('POST /api/v1/config/admin/validate-auto-rename', () => {
  it.each(PROVIDER_IDS)('%s: sends the one-token probe with the given key and answers {ok: true}', async (provider) => {
    const key = `key-${provider}-123`;
    const res = await validate({ provider, modelId: MODELS[provider], apiKey: key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    const expected = probes[provider]!(key, MODELS[provider]!);
    expect(request).toMatchObject({ provider, method: 'POST', path: expected.path, body: expected.body });
    expect(request!.headers).toMatchObject(expected.headers);
    for (const name of KEY_HEADERS.filter((h) => !(h in expected.headers))) {
      expect([name, request!.headers[name]]).toEqual([name, undefined]);
    }
  });

  it('answers 400 "Unknown provider: <provider>" and calls nothing', async () => {
    expectRefusal(await validate({ provider: 'mistral', modelId: 'm', apiKey: 'k' }), 'Unknown provider: mistral');
    expect(fake.requests).toEqual([]);
  });

  it("names the provider's first environment variable when no key is available", async () => {
    const cases: [string, string][] = [
      ['anthropic', 'ANTHROPIC_API_KEY'],
      ['openai', 'OPENAI_API_KEY'],
      ['google', 'GEMINI_API_KEY'],
      ['xai', 'XAI_API_KEY'],
      ['openrouter', 'OPENROUTER_API_KEY'],
    ];
    for (const [provider, envVar] of cases) {
      expectRefusal(
        await validate({ provider, modelId: 'm', apiKey: '   ' }),
        `No API key available. Set the ${envVar} environment variable or provide a key in the settings.`,
      );
    }
    expect(fake.requests).toEqual([]);
  });

  it('uses the given key, else the stored autoRename.apiKey, else the environment (a blank key counts as none)', async () => {
    api.setConfig({ autoRename: { enabled: false, provider: 'openai', modelId: 'gpt', apiKey: 'stored-key' } });
    api.setEnv({ OPENAI_API_KEY: 'env-key', GOOGLE_API_KEY: 'google-env-key' });
    expect((await validate({ provider: 'openai', modelId: 'gpt', apiKey: 'given-key' })).status).toBe(200);
    expect((await validate({ provider: 'openai', modelId: 'gpt', apiKey: '' })).status).toBe(200);
    expect((await validate({ provider: 'openai', modelId: 'gpt' })).status).toBe(200);
    api.setConfig({});
    expect((await validate({ provider: 'openai', modelId: 'gpt' })).status).toBe(200);
    // Google's second variable is used when the first is unset.
    expect((await validate({ provider: 'google', modelId: 'gem' })).status).toBe(200);
    expect(fake.requests.map((r) => r.headers.authorization ?? r.path)).toEqual([
      'Bearer given-key',
      'Bearer stored-key',
      'Bearer stored-key',
      'Bearer env-key',
      '/models/gem:generateContent?key=google-env-key',
    ]);
  });

  it('answers 400 "Authentication failed" for 401 and 403', async () => {
    for (const status of [401, 403]) {
      fake.answer = () => ({ status, body: { error: { message: 'bad key' } } });
      expectRefusal(
        await validate({ provider: 'anthropic', modelId: 'claude', apiKey: 'k' }),
        `Authentication failed: invalid API key. (${status})`,
      );
    }
  });

  it('answers 400 naming the model and quoting the body for 404', async () => {
    fake.answer = () => ({ status: 404, body: '{"error":"no such model"}' });
    expectRefusal(
      await validate({ provider: 'openrouter', modelId: 'x/unknown', apiKey: 'k' }),
      'Model "x/unknown" not found. (404): {"error":"no such model"}',
    );
  });

  it('answers other provider errors with the provider named for Anthropic and Google, plain for OpenAI-compatible', async () => {
    fake.answer = () => ({ status: 500, body: 'overloaded' });
    const cases: [string, string][] = [
      ['anthropic', 'Anthropic API error (500): overloaded'],
      ['google', 'Google API error (500): overloaded'],
      ['openai', 'API error (500): overloaded'],
      ['xai', 'API error (500): overloaded'],
      ['openrouter', 'API error (500): overloaded'],
    ];
    for (const [provider, message] of cases) {
      expectRefusal(await validate({ provider, modelId: 'm', apiKey: 'k' }), message);
    }
    fake.answer = () => ({ status: 429, body: 'slow down' });
    expectRefusal(await validate({ provider: 'openai', modelId: 'm', apiKey: 'k' }), 'API error (429): slow down');
  });

  it('never echoes a key, even when the provider quotes it back', async () => {
    const key = 'sk-secret-value-0123456789';
    fake.answer = () => ({ status: 400, body: `{"error":"bad request for key ${key}"}` });
    const res = await validate({ provider: 'google', modelId: 'gem', apiKey: key });
    expectRefusal(res, 'Google API error (400): {"error":"bad request for key [redacted]"}');
    expect(res.text).not.toContain(key);
  });

  it('answers 400 with the underlying error when the provider does not answer in time', async () => {
    fake.answer = () => ({ delayMs: TIMEOUT_MS + 1000 });
    const started = Date.now();
    const res = await validate({ provider: 'xai', modelId: 'grok', apiKey: 'k' });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 900);
    expectRefusal(res, 'The operation was aborted due to timeout');
  });

  it('answers 400 with the underlying error when the provider cannot be reached', async () => {
    const closed = await startFakeProvider();
    await closed.close();
    api.setEnv({ AUTO_RENAME_BASE_URLS: JSON.stringify({ ...fake.baseUrls, anthropic: closed.baseUrls.anthropic }) });
    try {
      const res = await validate({ provider: 'anthropic', modelId: 'claude', apiKey: 'k' });
      const port = new URL(closed.baseUrls.anthropic).port;
      expectRefusal(res, `connect ECONNREFUSED 127.0.0.1:${port}`);
    } finally {
      api.setEnv({ AUTO_RENAME_BASE_URLS: JSON.stringify(fake.baseUrls) });
    }
  });

  it('refuses a body without provider or modelId with VALIDATION_ERROR, calling nothing', async () => {
    for (const body of [
      { modelId: 'm', apiKey: 'k' },
      { provider: 'openai', apiKey: 'k' },
    ]) {
      const res = await validate(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect(fake.requests).toEqual([]);
  });
});
