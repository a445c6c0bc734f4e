/**
 * Browser sessions (contract §1.11.1, this project's extension): a browser signs in once with the
 * instance secret and then holds a signed, expiring cookie instead, so the secret never has to be in
 * a page.
 *
 * The cookie's value is `<issued at, epoch seconds>.<session id>.<MAC>`, the MAC being HMAC-SHA256
 * with the session-signing key (store/secrets-repo.ts sessionKey, SECRET#SESSION) over the issue
 * time, the id and a digest of the instance secret in force. Each session also has a record
 * (store/sessions-repo.ts, Keys.session) while it may be used, so:
 * - a forged or tampered value is refused by the MAC alone, with no storage call beyond the key's
 *   cached read; a well-signed one is accepted only while its record exists and has not expired;
 * - signing out deletes that session's record, signing out everywhere every record (as does a
 *   change of the secret through PATCH /config/admin), so the same value presented again is refused;
 * - the record's presence is cached per function instance for SESSION_CHECK_MS (a revoked session
 *   for good), and an open event stream reads it again every SESSION_CHECK_MS (core/session-watch.ts);
 * - it expires SESSION_LIFETIME_MS after it was issued; a request presenting a session older than
 *   SESSION_RENEW_AFTER_MS renews it (the record's expiry moves, the browser gets a fresh value);
 * - rotating the instance secret invalidates every session (the digest no longer matches).
 * A readable hint cookie (SESSION_HINT_COOKIE, no secret in it) tells the web app whether to show
 * the sign-in form or load, without a request that fails. Failed sign-ins are limited per client
 * (core/secret-guesses.ts).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { env } from '../platform/env.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { sessionKey } from '../store/secrets-repo.js';
import { deleteAllSessions, deleteSession, extendSession, putSession, sessionExpiry } from '../store/sessions-repo.js';
import { checkSignIn } from './secret-guesses.js';

export const SESSION_COOKIE = 'relay_session';
/** Readable by the page (not HttpOnly), Path=/: the session's expiry (epoch seconds), nothing secret. */
export const SESSION_HINT_COOKIE = 'relay_signed_in';
export const SESSION_LIFETIME_MS = 30 * 24 * 3600_000;
export const SESSION_RENEW_AFTER_MS = 24 * 3600_000;
/**
 * How long an instance trusts a session record it read, and how often an open event stream reads
 * it again: the bound on a sign-out reaching every instance and closing the streams of that session.
 */
export const SESSION_CHECK_MS = 4000;
/** SESSION_CHECK_MS, or the environment's SESSION_CHECK_MS (tests shorten it; the stack never sets it). */
export const sessionCheckMs = (): number => env().SESSION_CHECK_MS ?? SESSION_CHECK_MS;

/** A session a request presented and that passed every check. */
export interface Session {
  id: string;
  /** When this value was issued (ms). */
  issuedMs: number;
  /** The digest of the instance secret it was signed under (core/session-watch.ts compares it). */
  secretDigest: string;
}

export const secretDigest = (value: string): string => createHash('sha256').update(value, 'utf8').digest('base64url');

function macOf(key: string, issuedAtSeconds: number, sessionId: string, instanceSecret: string): string {
  return createHmac('sha256', key)
    .update(`session.v2.${issuedAtSeconds}.${sessionId}.${secretDigest(instanceSecret)}`)
    .digest('base64url');
}

/** A new session id: 128 random bits. */
export const newSessionId = (): string => randomBytes(16).toString('base64url');

/** A session value for session `sessionId`, issued at `now` for the instance secret in force. */
export function sessionValue(key: string, instanceSecret: string, now: number, sessionId: string): string {
  const issuedAt = Math.floor(now / 1000);
  return `${issuedAt}.${sessionId}.${macOf(key, issuedAt, sessionId, instanceSecret)}`;
}

const VALUE_SHAPE = /^(\d{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** The session id a value names, by its shape alone (sign-out: nothing is granted by it). */
export const sessionIdOf = (value: string): string | undefined => VALUE_SHAPE.exec(value)?.[2];

/** The session a presented value names, if it is well signed and unexpired; undefined otherwise. No storage call. */
export function verifySessionValue(
  value: string,
  key: string,
  instanceSecret: string,
  now: number,
): Session | undefined {
  const match = VALUE_SHAPE.exec(value);
  if (!match) return undefined;
  const issuedAt = Number(match[1]);
  const id = match[2]!;
  const expected = Buffer.from(macOf(key, issuedAt, id, instanceSecret));
  if (!timingSafeEqual(expected, Buffer.from(match[3]!))) return undefined;
  const issuedMs = issuedAt * 1000;
  // Not from the future (beyond a minute of clock skew between containers), not expired.
  if (issuedMs > now + 60_000 || now - issuedMs >= SESSION_LIFETIME_MS) return undefined;
  return { id, issuedMs, secretDigest: secretDigest(instanceSecret) };
}

/** The session cookie's value among a request's cookies (`name=value` strings), if any. */
export function sessionCookieOf(cookies: readonly string[] | undefined): string | undefined {
  for (const cookie of cookies ?? []) {
    const at = cookie.indexOf('=');
    if (at > 0 && cookie.slice(0, at).trim() === SESSION_COOKIE) return cookie.slice(at + 1).trim();
  }
  return undefined;
}

const secureFlag = (secure: boolean) => (secure ? '; Secure' : '');

/**
 * The `Set-Cookie` values of a session: the HttpOnly credential on /api, and the page-readable
 * hint on / holding the session's expiry (epoch seconds); `secure` unless served over plain HTTP on
 * loopback.
 */
export function sessionSetCookies(value: string, expiresMs: number, secure: boolean): string[] {
  // Sessions are issued and renewed for SESSION_LIFETIME_MS from the request's start.
  const maxAge = Math.floor(SESSION_LIFETIME_MS / 1000);
  return [
    `${SESSION_COOKIE}=${value}; Path=/api; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secureFlag(secure)}`,
    `${SESSION_HINT_COOKIE}=${Math.floor(expiresMs / 1000)}; Path=/; Max-Age=${maxAge}; SameSite=Strict${secureFlag(secure)}`,
  ];
}

/** The `Set-Cookie` values that remove both cookies. */
export function clearSessionCookies(secure: boolean): string[] {
  return [
    `${SESSION_COOKIE}=; Path=/api; Max-Age=0; HttpOnly; SameSite=Strict${secureFlag(secure)}`,
    `${SESSION_HINT_COOKIE}=; Path=/; Max-Age=0; SameSite=Strict${secureFlag(secure)}`,
  ];
}

// ---- Session records, cached per function instance ----

/** What this instance last read of a session: its expiry (ms), or `revoked` (kept for good). */
const known = new Map<string, { expiresMs: number | 'revoked'; at: number }>();
const MAX_KNOWN = 10_000;

function remember(id: string, expiresMs: number | 'revoked', at: number): void {
  if (known.size >= MAX_KNOWN) known.clear();
  known.set(id, { expiresMs, at });
}

/**
 * When a session expires (ms), or undefined when it has no record: from this instance's memory
 * when read less than SESSION_CHECK_MS ago (or revoked), else one strongly consistent GetItem.
 * `fresh`: always read (an open stream's periodic check).
 */
export async function recordedExpiry(id: string, now: number, fresh = false): Promise<number | undefined> {
  const cached = known.get(id);
  if (cached?.expiresMs === 'revoked') return undefined;
  if (!fresh && cached && now - cached.at < sessionCheckMs()) return cached.expiresMs;
  const expires = await sessionExpiry(id);
  // A record past its expiry (TTL deletion lags) is an ended session too.
  remember(id, expires === undefined || expires <= now ? 'revoked' : expires, now);
  return expires;
}

/**
 * A presented session if it is valid now (well signed, unexpired, recorded); undefined otherwise.
 * Reads the signing key (cached); a service where nobody ever signed in has no key, hence no valid
 * session, and a value whose signature fails costs no further storage call.
 */
export async function checkSession(value: string, config: InstanceConfig, now: number): Promise<Session | undefined> {
  const key = await sessionKey();
  if (key === undefined) return undefined;
  const session = verifySessionValue(value, key, config.security.instanceSecret, now);
  if (!session) return undefined;
  const expires = await recordedExpiry(session.id, now);
  return expires !== undefined && expires > now ? session : undefined;
}

/** Whether the request's cookies hold a session valid now. */
export async function isSignedIn(
  cookies: readonly string[] | undefined,
  config: InstanceConfig,
  now: number,
): Promise<boolean> {
  const value = sessionCookieOf(cookies);
  return value !== undefined && (await checkSession(value, config, now)) !== undefined;
}

/**
 * A renewed value for a valid session, when it is old enough to renew: its record's expiry moves to
 * SESSION_LIFETIME_MS from now (a conditional UpdateItem, about once a day per session), unless it
 * was revoked meanwhile.
 */
export async function renewedSession(
  session: Session,
  config: InstanceConfig,
  now: number,
): Promise<{ value: string; expiresMs: number } | undefined> {
  if (now - session.issuedMs < SESSION_RENEW_AFTER_MS) return undefined;
  const key = await sessionKey();
  if (key === undefined) return undefined;
  const expiresMs = now + SESSION_LIFETIME_MS;
  if (!(await extendSession(session.id, expiresMs))) return undefined;
  remember(session.id, expiresMs, now);
  return { value: sessionValue(key, config.security.instanceSecret, now, session.id), expiresMs };
}

/**
 * POST /auth/session: a new session's value and expiry for a right secret (its record put); 401 for
 * a wrong one (counted), 429 with Retry-After once the client's failures fill the window (a right
 * secret too: guessing must stop). Undefined when the secret is off: nothing to sign in to.
 */
export async function signIn(
  given: string | undefined,
  check: (given: string | undefined) => boolean,
  config: InstanceConfig,
  client: string,
  now: number,
): Promise<{ value: string; expiresMs: number } | undefined> {
  if (!config.security.instanceSecretEnabled) return undefined;
  await checkSignIn(client, check(given), now);
  const key = await sessionKey({ create: true });
  if (key === undefined) throw new Error('The session-signing key could not be made');
  const id = newSessionId();
  const expiresMs = now + SESSION_LIFETIME_MS;
  await putSession(id, expiresMs);
  remember(id, expiresMs, now);
  return { value: sessionValue(key, config.security.instanceSecret, now, id), expiresMs };
}

/**
 * DELETE /auth/session: the presented session's record goes (one DeleteItem), so its value is
 * refused from now on. The value's shape names the session; its signature is not needed (a session
 * id is 128 random bits, known only to the browser that holds it, which may end it).
 */
export async function signOut(cookies: readonly string[] | undefined, now: number): Promise<void> {
  const value = sessionCookieOf(cookies);
  const id = value === undefined ? undefined : sessionIdOf(value);
  if (id === undefined) return;
  await deleteSession(id);
  remember(id, 'revoked', now);
}

/**
 * DELETE /auth/sessions, and a change of the instance secret through PATCH /config/admin: every
 * session so far is refused from now on (every record deleted; this instance forgets them at once,
 * the others within SESSION_CHECK_MS). How many there were.
 */
export async function revokeAllSessions(): Promise<number> {
  const count = await deleteAllSessions();
  const now = Date.now();
  for (const id of known.keys()) remember(id, 'revoked', now);
  return count;
}

export const signOutEverywhere = revokeAllSessions;
