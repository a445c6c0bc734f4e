/**
 * Guessing the secret is limited on every path (issue 33 item 6, docs/web-app.md "Browser sessions"): wrong
 * `Authorization: Bearer` and `?token=` values count per client like failed sign-ins, in the same
 * window: 10 answer 401, then 429 with Retry-After in the contract's envelope, the right secret
 * from that client too; another client is unaffected; a request with the right secret (or with no
 * credential at all) makes no storage call for it. Clients are told apart as in the deployed
 * stack: by CloudFront's viewer address, believed on requests carrying the origin-verify value.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { setStoredSecretTtlForTests } from '../../../functions/store/secrets-repo.js';
import { newChat, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { callsDuring } from '../../support/ddb-calls.js';
import { connect, jsonOf } from '../../support/sse.js';

const SECRET = 'og_guesses-test-secret-0123456789abcdef';
const EDGE = 'edge-secret-guesses-test-0123456789abcdef';
const api = useApi({ config: { security: { instanceSecretEnabled: true, instanceSecret: SECRET } } });

/** Headers of a request from `ip` through the stack's CloudFront. */
const from = (ip: string, extra: Record<string, string> = {}) => ({
  headers: { 'cloudfront-viewer-address': `${ip}:40000`, 'x-origin-verify': EDGE, ...extra },
});
const bearer = (ip: string, secret: string) => from(ip, { authorization: `Bearer ${secret}` });

beforeAll(async () => {
  await ddb().send(
    new PutCommand({
      TableName: api.tableName,
      Item: { ...Keys.generatedSecret('ORIGIN_VERIFY'), type: 'secret', value: EDGE },
    }),
  );
  api.setEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' });
  setStoredSecretTtlForTests();
});
afterAll(() => {
  api.setEnv({ STORED_SECRETS: undefined });
  setStoredSecretTtlForTests();
});

/** Sends `attempt` until it answers 429 (at most 20 times); how many 401s came first, and the 429. */
async function untilLimited(
  attempt: (n: number) => Promise<Response>,
): Promise<{ failures: number; limited: Response }> {
  for (let n = 0; n < 20; n++) {
    const res = await attempt(n);
    if (res.status === 429) return { failures: n, limited: res };
    expect([n, res.status, res.body]).toEqual([
      n,
      401,
      { error: { code: 'UNAUTHORIZED', message: 'Missing or invalid instance secret.', details: null } },
    ]);
  }
  throw new Error('never limited');
}

function expectLimited(res: { status: number; headers: Headers; body: any }): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    error: { code: 'RATE_LIMIT_ERROR', message: expect.stringMatching(/^Too many failed /), details: null },
  });
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(600);
}

describe('guessing the secret is limited on every path', () => {
  it('the right secret and requests without any credential make no call for the limit, and are never limited', async () => {
    const calls = await callsDuring(async () => {
      expect((await api.post('/api/v1/chats', newChat(), bearer('198.51.100.1', SECRET))).status).toBe(201);
      for (let i = 0; i < 12; i++)
        expect((await api.post('/api/v1/chats', newChat(), from('198.51.100.1'))).status).toBe(401);
      expect((await api.post('/api/v1/chats', newChat(), bearer('198.51.100.1', SECRET))).status).toBe(201);
    });
    expect(calls.filter((c) => c.includes('SIGNIN'))).toEqual([]);
  });

  it('wrong Bearer tokens: 10 answer 401, then 429 with Retry-After, the right secret from that client too; another client is unaffected', async () => {
    const guesser = '198.51.100.2';
    const { failures, limited } = await untilLimited((n) =>
      api.post('/api/v1/chats', newChat(), bearer(guesser, `guess-${n}`)),
    );
    expect(failures).toBe(10);
    expectLimited(limited);
    // The right secret too: past the limit an answer tells the guesser nothing.
    expectLimited(await api.post('/api/v1/chats', newChat(), bearer(guesser, SECRET)));
    // The sign-in shares the window.
    expectLimited(await api.post('/api/v1/auth/session', { secret: SECRET }, from(guesser)));
    // Another client.
    expect((await api.post('/api/v1/chats', newChat(), bearer('198.51.100.3', SECRET))).status).toBe(201);
    expect((await api.post('/api/v1/chats', newChat(), bearer('198.51.100.3', 'wrong'))).status).toBe(401);
  });

  it('wrong ?token= on the event stream: 10 answer 401, then 429 with Retry-After', async () => {
    const guesser = '198.51.100.4';
    const { failures, limited } = await untilLimited(async (n) => {
      const res = await jsonOf(`${api.url}/api/v1/events/stream?token=guess-${n}`, from(guesser).headers);
      return { ...res, text: JSON.stringify(res.body) };
    });
    expect(failures).toBe(10);
    expectLimited(limited);
    const right = await connect(`${api.url}/api/v1/events/stream?token=${SECRET}`, from('198.51.100.5').headers);
    expect(right.status).toBe(200);
    right.close();
  });

  it('failed sign-ins and wrong Bearer tokens fill one window', async () => {
    const guesser = '198.51.100.6';
    for (let n = 0; n < 5; n++) {
      expect((await api.post('/api/v1/auth/session', { secret: `guess-${n}` }, from(guesser))).status).toBe(401);
    }
    // Reads need no secret here (the read toggle is off): a wrong one there is not looked at, nor counted.
    for (let n = 0; n < 3; n++)
      expect((await api.get('/api/v1/chats?limit=1', bearer(guesser, `r${n}`))).status).toBe(200);
    const { failures, limited } = await untilLimited((n) =>
      api.post('/api/v1/chats', newChat(), bearer(guesser, `g${n}`)),
    );
    expect(failures).toBe(5);
    expectLimited(limited);
  });
});
