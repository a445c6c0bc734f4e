/**
 * Browser sessions end for real (contract §1.11.1, issue 33 item 4): after signing out, the same
 * cookie presented again is refused with 401 on every route and on the event stream; signing out
 * everywhere and rotating the secret refuse every earlier cookie; an open event stream of an ended
 * session closes within 5 s; and the Bearer path makes no session storage call. Storage calls are
 * counted with a middleware on the handlers' DynamoDB client.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { setStoredSecretTtlForTests } from '../../../functions/store/secrets-repo.js';
import { SESSION_CHECK_MS } from '../../../functions/core/sessions.js';
import { COUNTING_ENV, newChat, useApi } from '../../support/api.js';
import { callsDuring } from '../../support/ddb-calls.js';
import { connect } from '../../support/sse.js';
import type { SseConnection } from '../../support/sse.js';

const SECRET = 'og_revocation-test-secret-0123456789abcdef';
const withSecret = (secret = SECRET) => ({
  security: { instanceSecretEnabled: true, instanceSecret: secret, readEndpointsRequireInstanceSecret: true },
});
/** The contract's bound on an open stream outliving its session (§1.11.1). */
const STREAM_CLOSES_WITHIN_MS = 5000;
/**
 * The session check period this file runs with (SESSION_CHECK_MS, 4000 ms by default): the waits
 * below are whole check periods, and a shorter one passes them sooner. The bounds are held against
 * it as the contract's 5 s is held against the default (first test below).
 */
const CHECK_MS = 1000;
/** A check's period and its read: how late a check may see an ended session (a loaded machine included). */
const CHECK_SEES_WITHIN_MS = CHECK_MS + STREAM_CLOSES_WITHIN_MS - SESSION_CHECK_MS;

const api = useApi({ config: withSecret(), env: { ...COUNTING_ENV, SESSION_CHECK_MS: String(CHECK_MS) } });

const cookieOf = (res: { headers: Headers }) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('relay_session='))!;
const withCookie = (cookie: string) => ({ headers: { cookie } });
const sameOrigin = (cookie: string) => ({ headers: { cookie, origin: api.url } });
const bearer = (secret = SECRET) => ({ headers: { authorization: `Bearer ${secret}` } });

async function signedIn(): Promise<string> {
  const res = await api.post('/api/v1/auth/session', { secret: SECRET });
  expect(res.status).toBe(204);
  return cookieOf(res);
}

/** The calls among `calls` that touch sessions or the failed-attempt window: command and partition. */
const sessionCalls = (calls: string[]) =>
  calls
    .filter((c) => /SESSION|SIGNIN/.test(c))
    .map((c) => `${c.split(' ')[0]} ${/"pk":"(SESSIONS|RL#|SECRET#SESSION)/.exec(c)?.[1] ?? '?'}`);

/** The three ways a cookie is used: a read, a same-origin write, the event stream. Their statuses. */
async function uses(cookie: string): Promise<number[]> {
  const read = await api.get('/api/v1/chats', withCookie(cookie));
  const write = await api.post('/api/v1/chats', newChat(), sameOrigin(cookie));
  const stream = await connect(`${api.url}/api/v1/events/stream`, { cookie });
  stream.close();
  return [read.status, write.status, stream.status];
}

/** Opens a stream with `cookie`, runs `end`, and resolves with how long the stream outlived it (ms). */
async function streamOutlives(
  cookie: string,
  end: () => Promise<unknown>,
): Promise<{ ms: number; stream: SseConnection }> {
  const stream = await connect(`${api.url}/api/v1/events/stream`, { cookie });
  expect(stream.status).toBe(200);
  await stream.waitFor((c) => c.frames.some((f) => f.kind === 'comment' && f.text === 'stream opened'));
  const ended = Promise.race([
    stream.ended.then(() => Date.now()),
    new Promise<number>((ok) => setTimeout(() => ok(Infinity), 3 * CHECK_SEES_WITHIN_MS)),
  ]);
  await end();
  const at = Date.now();
  const ms = (await ended) - at;
  stream.close();
  return { ms, stream };
}

describe('signing out revokes (§1.11.1)', () => {
  it('a replayed cookie after DELETE /auth/session is 401 on a read, a write and the stream; a fresh sign-in works', async () => {
    const cookie = await signedIn();
    expect(await uses(cookie)).toEqual([200, 201, 200]);
    const out = await api.request('DELETE', '/api/v1/auth/session', undefined, sameOrigin(cookie));
    expect(out.status).toBe(204);
    expect(await uses(cookie)).toEqual([401, 401, 401]);
    const probe = await api.post('/api/v1/auth/session', {}, withCookie(cookie));
    expect(probe.status).toBe(401);
    expect(await uses(await signedIn())).toEqual([200, 201, 200]);
  });

  it('signing out one session leaves the others', async () => {
    const [a, b] = [await signedIn(), await signedIn()];
    expect((await api.request('DELETE', '/api/v1/auth/session', undefined, withCookie(a))).status).toBe(204);
    expect((await api.get('/api/v1/chats', withCookie(a))).status).toBe(401);
    expect((await api.get('/api/v1/chats', withCookie(b))).status).toBe(200);
  });

  it('after DELETE /auth/sessions every earlier cookie is 401 everywhere; a new sign-in works', async () => {
    const cookies = [await signedIn(), await signedIn(), await signedIn()];
    for (const cookie of cookies) expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(200);
    expect((await api.request('DELETE', '/api/v1/auth/sessions', undefined, sameOrigin(cookies[0]!))).status).toBe(204);
    for (const cookie of cookies) expect(await uses(cookie)).toEqual([401, 401, 401]);
    expect(await uses(await signedIn())).toEqual([200, 201, 200]);
  });

  it("another instance's sign-out (the record deleted in the table) reaches this one within a check (5 s by default)", async () => {
    const cookie = await signedIn();
    expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(200);
    const id = cookie.split('=')[1]!.split('.')[1]!;
    await ddb().send(new DeleteCommand({ TableName: api.tableName, Key: Keys.session(id) }));
    const deleted = Date.now();
    while ((await api.get('/api/v1/chats', withCookie(cookie))).status === 200) {
      expect(Date.now() - deleted).toBeLessThan(CHECK_SEES_WITHIN_MS);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(401);
  });

  it('rotating the secret (a redeploy with another one) refuses every earlier cookie', async () => {
    const cookie = await signedIn();
    api.setConfig(withSecret(`${SECRET}-rotated`));
    try {
      expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(401);
    } finally {
      api.setConfig(withSecret());
    }
  });

  it('sign-in, check and sign-out: what each costs in storage calls', async () => {
    let cookie = '';
    const signIn = await callsDuring(async () => void (cookie = await signedIn()));
    // The failure window's read (a right secret too is refused while it is full) and the record's put.
    expect(sessionCalls(signIn)).toEqual(['GetItemCommand RL#', 'PutItemCommand SESSIONS']);
    // Within a check period of the sign-in, the instance that made the record trusts it: no call.
    const hit = await callsDuring(async () => void (await api.get('/api/v1/chats?limit=1', withCookie(cookie))));
    expect(sessionCalls(hit)).toEqual([]);
    await new Promise((r) => setTimeout(r, CHECK_MS + 100));
    const miss = await callsDuring(async () => void (await api.get('/api/v1/chats?limit=1', withCookie(cookie))));
    expect(sessionCalls(miss)).toEqual(['GetItemCommand SESSIONS']);
    const out = await callsDuring(
      async () => void (await api.request('DELETE', '/api/v1/auth/session', undefined, withCookie(cookie))),
    );
    expect(sessionCalls(out)).toEqual(['DeleteItemCommand SESSIONS']);
  });

  it('Bearer and ?token= requests make no session storage call, and no call for the guess limit', async () => {
    const calls = await callsDuring(async () => {
      expect((await api.get('/api/v1/chats', bearer())).status).toBe(200);
      expect((await api.post('/api/v1/chats', newChat(), bearer())).status).toBe(201);
      const stream = await connect(`${api.url}/api/v1/events/stream?token=${encodeURIComponent(SECRET)}`);
      expect(stream.status).toBe(200);
      stream.close();
    });
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((c) => /SESSION|SIGNIN/.test(c))).toEqual([]);
  });
});

describe('an open event stream closes within 5 s of its session ending (§1.11.1)', () => {
  it('by default checks every 4 s, a second inside the 5 s for the read and a loaded machine', () => {
    // The waits and bounds below run on this file's shorter period (CHECK_MS), with the same second.
    expect(SESSION_CHECK_MS).toBe(4000);
    expect(SESSION_CHECK_MS + 1000).toBeLessThanOrEqual(STREAM_CLOSES_WITHIN_MS);
  });

  it('when that session signs out', async () => {
    const cookie = await signedIn();
    const { ms, stream } = await streamOutlives(cookie, () =>
      api.request('DELETE', '/api/v1/auth/session', undefined, withCookie(cookie)),
    );
    expect(ms).toBeLessThan(CHECK_SEES_WITHIN_MS);
    expect(stream.frames.some((f) => f.kind === 'comment' && /session ended/.test(f.text))).toBe(true);
  });

  it('on sign out everywhere', async () => {
    const cookie = await signedIn();
    const other = await signedIn();
    const { ms } = await streamOutlives(cookie, () =>
      api.request('DELETE', '/api/v1/auth/sessions', undefined, sameOrigin(other)),
    );
    expect(ms).toBeLessThan(CHECK_SEES_WITHIN_MS);
  });

  it('reads its session again every check period: one GetItem a check (every 4 s by default: 900 an hour)', async () => {
    const cookie = await signedIn();
    let stream: SseConnection | undefined;
    const calls = await callsDuring(async () => {
      stream = await connect(`${api.url}/api/v1/events/stream`, { cookie });
      await new Promise((r) => setTimeout(r, 2 * CHECK_MS + 500));
    });
    stream!.close();
    expect(sessionCalls(calls)).toEqual(['GetItemCommand SESSIONS', 'GetItemCommand SESSIONS']);
  });

  it('while the session lives, it stays open and delivers', async () => {
    const cookie = await signedIn();
    const stream = await connect(`${api.url}/api/v1/events/stream`, { cookie });
    try {
      await new Promise((r) => setTimeout(r, CHECK_MS + 500));
      const created = await api.post('/api/v1/chats', newChat(), bearer());
      await stream.waitFor((c) => c.events().some((e) => e.data.payload.chatId === created.body.id));
    } finally {
      stream.close();
    }
  });

  it('when the secret is rotated through PATCH /config/admin: the old cookies are 401, the stream closes', async () => {
    const cookie = await signedIn();
    const rotated = `${SECRET}-patched`;
    const { ms } = await streamOutlives(cookie, () =>
      api.patch('/api/v1/config/admin', { security: { instanceSecret: rotated } }, bearer()),
    );
    try {
      expect(ms).toBeLessThan(CHECK_SEES_WITHIN_MS);
      expect((await api.get('/api/v1/chats', withCookie(cookie))).status).toBe(401);
    } finally {
      expect(
        (await api.patch('/api/v1/config/admin', { security: { instanceSecret: SECRET } }, bearer(rotated))).status,
      ).toBe(200);
    }
  });

  describe('with the secret kept in the table (the deployed stack)', () => {
    beforeAll(async () => {
      await ddb().send(
        new PutCommand({
          TableName: api.tableName,
          Item: { ...Keys.generatedSecret('INSTANCE'), type: 'secret', value: SECRET },
        }),
      );
      api.setEnv({ INSTANCE_SECRET_IN_TABLE: '1', STORED_SECRETS: 'INSTANCE' });
      setStoredSecretTtlForTests();
    });
    afterAll(() => {
      api.setEnv({ INSTANCE_SECRET_IN_TABLE: undefined, STORED_SECRETS: undefined });
      setStoredSecretTtlForTests();
    });

    it("when the owner puts another secret in the item (the functions' 5-minute cache notwithstanding)", async () => {
      const cookie = await signedIn();
      const { ms } = await streamOutlives(cookie, () =>
        ddb().send(
          new PutCommand({
            TableName: api.tableName,
            Item: { ...Keys.generatedSecret('INSTANCE'), type: 'secret', value: `${SECRET}-put` },
          }),
        ),
      );
      expect(ms).toBeLessThan(CHECK_SEES_WITHIN_MS);
    });
  });
});
