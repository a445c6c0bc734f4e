import { describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';
import { sleep } from '../../../functions/platform/retry.js';

// Long enough that the window does not roll over mid-test on a loaded 2-core machine.
const WINDOW_MS = 4000;
const api = useApi({
  config: {
    security: { instanceSecretEnabled: true, instanceSecret: 's', readEndpointsRequireInstanceSecret: false },
  },
  env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '5', OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS: String(WINDOW_MS) },
});

const auth = { headers: { authorization: 'Bearer s' } };
describe('write rate limiting (§1.12)', () => {
  it('admits MAX counted writes per window, then answers 429 with Retry-After, then opens a new window', async () => {
    await sleep(WINDOW_MS); // kept (time is the behavior): start from a fresh window
    // 401s are not counted: authentication runs first.
    for (let i = 0; i < 3; i++) expect((await api.post('/api/v1/chats', newChat())).status).toBe(401);
    // Validation failures and 404s are counted.
    expect((await api.post('/api/v1/chats', {}, auth)).status).toBe(400);
    expect((await api.post('/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA/archive', undefined, auth)).status).toBe(404);
    for (let i = 0; i < 3; i++) expect((await api.post('/api/v1/chats', newChat(), auth)).status).toBe(201);

    const limited = await api.post('/api/v1/chats', newChat(), auth);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: { code: 'RATE_LIMIT_ERROR', message: 'Write rate limit exceeded.', details: null },
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000));

    // Reads, health and preflight are never limited.
    expect((await api.get('/api/v1/chats')).status).toBe(200);
    expect((await api.get('/api/v1/health')).status).toBe(200);
    expect(
      (await api.request('OPTIONS', '/api/v1/chats', undefined, { headers: { origin: 'https://a.example' } })).status,
    ).toBe(204);

    // Kept (time is the behavior): the window rolls over.
    await sleep(WINDOW_MS + 50);
    expect((await api.post('/api/v1/chats', newChat(), auth)).status).toBe(201);
  });

  it('never admits more than MAX writes of one window under concurrency, and the 429s are not counted', async () => {
    await sleep(WINDOW_MS + 50); // kept (time is the behavior): a fresh window
    const results = await Promise.all(Array.from({ length: 12 }, () => api.post('/api/v1/chats', newChat(), auth)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });
});
