/**
 * Browser sessions (contract §1.11.1): sign in with the secret for a signed cookie, the cookie as a
 * credential on every class of route and on the event stream, same-origin writes only, expiry and
 * renewal, invalidation by secret rotation and by "sign out everywhere", and the failed-attempt limit.
 */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { SESSION_COOKIE, sessionValue } from '../../../functions/core/sessions.js';
import { ORIGIN_VERIFY_HEADER, VIEWER_HOST_HEADER } from '../../../functions/middleware/origin-verify.js';
import { Keys } from '../../../functions/store/keys.js';
import { newChat, useApi } from '../../support/api.js';
import { connect } from '../../support/sse.js';

const SECRET = 'og_session-test-secret-0123456789abcdef';
const withSecret = (secret = SECRET) => ({
  security: { instanceSecretEnabled: true, instanceSecret: secret, readEndpointsRequireInstanceSecret: true },
});
const UNAUTHORIZED = { error: { code: 'UNAUTHORIZED', message: 'Missing or invalid instance secret.', details: null } };
const FORBIDDEN = { error: { code: 'FORBIDDEN', message: 'Cross-site request refused.', details: null } };
const DAY = 24 * 3600_000;

const api = useApi({ config: withSecret() });

const signIn = (body: unknown, headers: Record<string, string> = {}) =>
  api.request('POST', '/api/v1/auth/session', body, { headers });
/** The cookie's `name=value` from a Set-Cookie header. */
const cookieOf = (setCookie: string | null) => setCookie!.split(';')[0]!;
const withCookie = (cookie: string, extra: Record<string, string> = {}) => ({ headers: { cookie, ...extra } });
const sameOrigin = (cookie: string) => withCookie(cookie, { origin: api.url });

async function signedIn(): Promise<string> {
  const res = await signIn({ secret: SECRET });
  expect(res.status).toBe(204);
  return cookieOf(res.headers.get('set-cookie'));
}

const documentClient = () =>
  DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: process.env.TEST_DYNAMODB_ENDPOINT, region: 'us-east-1' }),
  );

async function putItem(item: Record<string, unknown>): Promise<void> {
  const client = documentClient();
  await client.send(new PutCommand({ TableName: api.tableName, Item: item }));
  client.destroy();
}

async function storedKey(): Promise<string> {
  const client = documentClient();
  const out = await client.send(
    new GetCommand({ TableName: api.tableName, Key: Keys.generatedSecret('SESSION'), ConsistentRead: true }),
  );
  client.destroy();
  return String(out.Item?.value);
}

describe('browser sessions (§1.11.1)', () => {
  it('signs in with the secret: 204 and an HttpOnly, SameSite=Strict cookie on /api that does not hold the secret', async () => {
    const res = await signIn({ secret: SECRET });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const [setCookie, hint] = res.headers.getSetCookie();
    const attributes = setCookie!.split(';').map((part) => part.trim());
    expect(attributes[0]).toMatch(new RegExp(`^${SESSION_COOKIE}=\\d+\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}$`));
    expect(attributes.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=2592000', 'Path=/api', 'SameSite=Strict']);
    // The page-readable hint (docs/web-app.md "Browser sessions"): the session's expiry, nothing secret, on /.
    const hinted = hint!.split(';').map((part) => part.trim());
    const expiry = Number(hinted[0]!.split('=')[1]);
    expect(hinted[0]).toMatch(/^relay_signed_in=\d+$/);
    expect(Math.abs(expiry - (Date.now() + 30 * DAY) / 1000)).toBeLessThan(60);
    expect(hinted.slice(1).sort()).toEqual(['Max-Age=2592000', 'Path=/', 'SameSite=Strict']);
    // Plain HTTP on loopback: no Secure (the browser would drop it); HTTPS anywhere else gets it.
    const secure = await signIn({ secret: SECRET }, { 'x-forwarded-proto': 'https' });
    expect(secure.headers.get('set-cookie')).toMatch(/; Secure$/);
    expect(setCookie).not.toContain(SECRET);
  });

  it('a wrong, missing or non-string secret is the 401 of §1.11, with no cookie', async () => {
    for (const body of [{ secret: 'wrong' }, { secret: `${SECRET}x` }, { secret: 5 }, { secret: null }]) {
      const res = await signIn(body);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(res.headers.get('set-cookie')).toBeNull();
    }
  });

  it('a body without a secret probes the session: 204 with a valid cookie, 401 (not counted) without one', async () => {
    const cookie = await signedIn();
    const probe = await signIn({}, { cookie });
    expect(probe.status).toBe(204);
    expect(probe.headers.get('set-cookie')).toBeNull();
    for (const headers of [{}, { cookie: `${SESSION_COOKIE}=1.forged` }] as Record<string, string>[]) {
      const refused = await signIn({}, headers);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(UNAUTHORIZED);
    }
    // Ten probes without a session do not fill the failed-attempt window (the last test counts it).
    for (let i = 0; i < 10; i++) expect((await signIn({})).status).toBe(401);
  });

  it('the cookie is accepted on reads, on same-origin writes and on the event stream', async () => {
    const cookie = await signedIn();
    expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(200);
    const created = await api.post('/api/v1/chats', newChat(), sameOrigin(cookie));
    expect(created.status).toBe(201);
    const stream = await connect(`${api.url}/api/v1/events/stream`, { cookie });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    } finally {
      stream.close();
    }
    // Without it, the same requests are refused.
    expect((await api.get('/api/v1/chats')).status).toBe(401);
    expect((await connect(`${api.url}/api/v1/events/stream`)).status).toBe(401);
  });

  it('a write authenticated by the cookie alone needs the service own Origin: 403 otherwise, and nothing changes', async () => {
    const cookie = await signedIn();
    const before = (await api.get('/api/v1/chats?limit=100', withCookie(cookie))).body.data.length;
    const origins: Record<string, string>[] = [
      {},
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: `${api.url}.evil` },
    ];
    for (const extra of origins) {
      const res = await api.post('/api/v1/chats', newChat(), withCookie(cookie, extra));
      expect(res.status).toBe(403);
      expect(res.body).toEqual(FORBIDDEN);
    }
    // The bearer secret needs no Origin (agents are not browsers).
    const bearer = await api.post('/api/v1/chats', newChat(), {
      headers: { cookie, authorization: `Bearer ${SECRET}`, origin: 'https://evil.example' },
    });
    expect(bearer.status).toBe(201);
    expect((await api.get('/api/v1/chats?limit=100', withCookie(cookie))).body.data.length).toBe(before + 1);
  });

  it('a tampered, expired or foreign cookie is 401 like a wrong secret; an old valid one is renewed', async () => {
    const cookie = await signedIn();
    const key = await storedKey();
    const now = Date.now();
    const value = cookie.split('=')[1]!;
    const [issued, id, mac] = value.split('.') as [string, string, string];
    const tampered = `${SESSION_COOKIE}=${Number(issued) + 1}.${id}.${mac}`;
    const expired = `${SESSION_COOKIE}=${sessionValue(key, SECRET, now - 30 * DAY - 1000, id)}`;
    const foreign = `${SESSION_COOKIE}=${sessionValue('another key', SECRET, now, id)}`;
    // Well signed, but no such session was ever made (nor recorded).
    const unrecorded = `${SESSION_COOKIE}=${sessionValue(key, SECRET, now, 'AAAAAAAAAAAAAAAAAAAAAA')}`;
    for (const bad of [tampered, expired, foreign, unrecorded, `${SESSION_COOKIE}=`, `${SESSION_COOKIE}=${SECRET}`]) {
      const res = await api.get('/api/v1/chats', withCookie(bad));
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    // A fresh session is not renewed; one issued two days ago is, with a new value.
    expect((await api.get('/api/v1/chats', withCookie(cookie))).headers.get('set-cookie')).toBeNull();
    const old = `${SESSION_COOKIE}=${sessionValue(key, SECRET, now - 2 * DAY, id)}`;
    const renewed = await api.get('/api/v1/chats', withCookie(old));
    expect(renewed.status).toBe(200);
    const next = cookieOf(renewed.headers.get('set-cookie'));
    expect(next).not.toBe(old);
    // The same session, renewed: the hint moves with it.
    expect(next.split('.')[1]).toBe(id);
    expect(renewed.headers.getSetCookie()[1]).toMatch(/^relay_signed_in=\d+; Path=\/;/);
    expect(Number(next.split('=')[1]!.split('.')[0])).toBeGreaterThanOrEqual(Math.floor(now / 1000));
    expect((await api.get('/api/v1/chats', withCookie(next))).status).toBe(200);
  });

  it('an Idempotency-Key on the sign-in is ignored: every right answer carries a cookie, none is replayed', async () => {
    const headers = { 'idempotency-key': 'same-key' };
    const first = await signIn({ secret: SECRET }, headers);
    const second = await signIn({ secret: SECRET }, headers);
    expect(first.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
    expect(second.headers.get('set-cookie')).toMatch(new RegExp(`^${SESSION_COOKIE}=`));
  });

  it('sign out clears the cookie; sign out everywhere refuses every session signed before it', async () => {
    const out = await api.request('DELETE', '/api/v1/auth/session');
    expect(out.status).toBe(204);
    expect(out.headers.getSetCookie()[0]).toMatch(new RegExp(`^${SESSION_COOKIE}=; Path=/api; Max-Age=0;`));
    expect(out.headers.getSetCookie()[1]).toMatch(/^relay_signed_in=; Path=\/; Max-Age=0;/);

    const a = await signedIn();
    const b = await signedIn();
    // Cross-site, it is refused like any cookie write.
    expect((await api.request('DELETE', '/api/v1/auth/sessions', undefined, withCookie(a))).status).toBe(403);
    expect((await api.get('/api/v1/chats', withCookie(b))).status).toBe(200);
    const everywhere = await api.request('DELETE', '/api/v1/auth/sessions', undefined, sameOrigin(a));
    expect(everywhere.status).toBe(204);
    for (const cookie of [a, b]) expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(401);
    // A new sign-in works.
    expect((await api.get('/api/v1/chats', withCookie(await signedIn()))).status).toBe(200);
  });

  it('rotating the instance secret invalidates every session', async () => {
    const cookie = await signedIn();
    api.setConfig(withSecret(`${SECRET}-rotated`));
    try {
      expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(401);
    } finally {
      api.setConfig(withSecret());
    }
    expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(200);
  });

  it('with the secret off, signing in answers 204 without a cookie', async () => {
    api.setConfig({});
    try {
      const res = await signIn({ secret: 'anything' });
      expect(res.status).toBe(204);
      expect(res.headers.get('set-cookie')).toBeNull();
    } finally {
      api.setConfig(withSecret());
    }
  });

  it('behind CloudFront a cookie write from the host the viewer used passes, vouched for by the origin-verify secret only', async () => {
    // The deployed stack: CloudFront's function on /api/* copies the viewer's Host into
    // VIEWER_HOST_HEADER and the origin adds the origin-verify secret (lib/constructs/edge.ts); the
    // function sees API Gateway's host, here the local one.
    const edgeSecret = 'edge-secret-session-test-0123456789abcdef';
    await putItem({ ...Keys.generatedSecret('ORIGIN_VERIFY'), type: 'secret', value: edgeSecret });
    api.setEnv({ STORED_SECRETS: 'ORIGIN_VERIFY' });
    try {
      const cookie = await signedIn();
      const viewer = 'relay.example.com';
      const fromViewer = { origin: `https://${viewer}`, [VIEWER_HOST_HEADER]: viewer };
      const before = (await api.get('/api/v1/chats?limit=100', withCookie(cookie))).body.data.length;
      const refused: Record<string, string>[] = [
        // Not through CloudFront: the header is anyone's to send.
        fromViewer,
        { ...fromViewer, [ORIGIN_VERIFY_HEADER]: `${edgeSecret}x` },
        // Through CloudFront, from another site, or the viewer's host over another scheme.
        { ...fromViewer, [ORIGIN_VERIFY_HEADER]: edgeSecret, origin: 'https://evil.example' },
        { ...fromViewer, [ORIGIN_VERIFY_HEADER]: edgeSecret, origin: `http://${viewer}` },
        { origin: `https://${viewer}`, [ORIGIN_VERIFY_HEADER]: edgeSecret },
      ];
      for (const extra of refused) {
        const res = await api.post('/api/v1/chats', newChat(), withCookie(cookie, extra));
        expect([extra, res.status, res.body]).toEqual([extra, 403, FORBIDDEN]);
      }
      const created = await api.post(
        '/api/v1/chats',
        newChat(),
        withCookie(cookie, { ...fromViewer, [ORIGIN_VERIFY_HEADER]: edgeSecret }),
      );
      expect(created.status).toBe(201);
      expect((await api.get('/api/v1/chats?limit=100', withCookie(cookie))).body.data.length).toBe(before + 1);
    } finally {
      api.setEnv({ STORED_SECRETS: undefined });
    }
  });

  // Last: it fills this client's failure window for the rest of the file.
  it('failed attempts are limited per client: 10 answer 401, then 429 with Retry-After, the right secret too', async () => {
    let failures = 0;
    for (;;) {
      const res = await signIn({ secret: `guess ${failures}` });
      if (res.status === 429) break;
      expect(res.status).toBe(401);
      failures++;
      expect(failures).toBeLessThanOrEqual(10);
    }
    // Earlier tests failed 4 times from this client already (probes without a secret do not count).
    expect(failures).toBe(10 - 4);
    const blocked = await signIn({ secret: SECRET });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe('RATE_LIMIT_ERROR');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(600);
    expect(blocked.headers.get('set-cookie')).toBeNull();
  });
});
