/**
 * Browser sessions (contract §1.11.1, this project's extension): a browser signs in once with the
 * instance secret and then holds a signed, expiring cookie instead, so the secret never has to be in
 * a page.
 *
 * The cookie's value is `<issued at, epoch seconds>.<MAC>`, where the MAC is HMAC-SHA256 with the
 * session-signing key (store/secrets-repo.ts sessionKey, SECRET#SESSION) over the issue time and a
 * digest of the instance secret in force. Nothing is stored per session, so checking one costs no
 * DynamoDB call beyond the key's cached read, and:
 * - it expires SESSION_LIFETIME_MS after it was issued; a request that presents a session older than
 *   SESSION_RENEW_AFTER_MS gets a fresh cookie, so a browser in use stays signed in (sliding);
 * - rotating the instance secret invalidates every session (the digest no longer matches);
 * - "sign out everywhere" replaces the signing key (within SESSION_KEY_TTL_MS in every container).
 * Failed sign-ins are limited per client (SIGN_IN_LIMIT), counted in a window item like the write
 * rate limit's.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { RateLimitedError, UnauthorizedError } from '../errors.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { Keys } from '../store/keys.js';
import { leaseFromWindow, windowUsage } from '../store/rate-limit-repo.js';
import { replaceSessionKey, sessionKey } from '../store/secrets-repo.js';

export const SESSION_COOKIE = 'relay_session';
export const SESSION_LIFETIME_MS = 30 * 24 * 3600_000;
export const SESSION_RENEW_AFTER_MS = 24 * 3600_000;
/** At most this many failed sign-ins per client and window, then 429 until the window ends. */
export const SIGN_IN_LIMIT = { max: 10, windowMs: 10 * 60_000 };

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

function macOf(key: string, issuedAtSeconds: number, instanceSecret: string): string {
  return createHmac('sha256', key)
    .update(`session.v1.${issuedAtSeconds}.${digest(instanceSecret).toString('base64url')}`)
    .digest('base64url');
}

/** A session value issued at `now` for the instance secret in force. */
export function sessionValue(key: string, instanceSecret: string, now: number): string {
  const issuedAt = Math.floor(now / 1000);
  return `${issuedAt}.${macOf(key, issuedAt, instanceSecret)}`;
}

/** When a presented value was issued (ms), if it is a valid, unexpired session; undefined otherwise. */
export function verifySessionValue(
  value: string,
  key: string,
  instanceSecret: string,
  now: number,
): number | undefined {
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  if (!match) return undefined;
  const issuedAt = Number(match[1]);
  const expected = Buffer.from(macOf(key, issuedAt, instanceSecret));
  const given = Buffer.from(match[2]!);
  if (!timingSafeEqual(expected, given)) return undefined;
  const issuedMs = issuedAt * 1000;
  // Not from the future (beyond a minute of clock skew between containers), not expired.
  if (issuedMs > now + 60_000 || now - issuedMs >= SESSION_LIFETIME_MS) return undefined;
  return issuedMs;
}

/** The session cookie's value among a request's cookies (`name=value` strings), if any. */
export function sessionCookieOf(cookies: readonly string[] | undefined): string | undefined {
  for (const cookie of cookies ?? []) {
    const at = cookie.indexOf('=');
    if (at > 0 && cookie.slice(0, at).trim() === SESSION_COOKIE) return cookie.slice(at + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` for a session value; `secure` unless served over plain HTTP on loopback. */
export function sessionSetCookie(value: string, secure: boolean): string {
  const maxAge = Math.floor(SESSION_LIFETIME_MS / 1000);
  return `${SESSION_COOKIE}=${value}; Path=/api; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** `Set-Cookie` that removes the session cookie. */
export function clearSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/api; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/**
 * A presented session's issue time (ms) if it is valid now; undefined otherwise. Reads the signing
 * key (cached); a service where nobody ever signed in has no key, hence no valid session.
 */
export async function checkSession(value: string, config: InstanceConfig, now: number): Promise<number | undefined> {
  const key = await sessionKey();
  if (key === undefined) return undefined;
  return verifySessionValue(value, key, config.security.instanceSecret, now);
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

/** A renewed value for a valid session issued at `issuedMs`, when it is old enough to renew. */
export async function renewedSession(
  issuedMs: number,
  config: InstanceConfig,
  now: number,
): Promise<string | undefined> {
  if (now - issuedMs < SESSION_RENEW_AFTER_MS) return undefined;
  const key = await sessionKey();
  return key === undefined ? undefined : sessionValue(key, config.security.instanceSecret, now);
}

/**
 * POST /auth/session: the session value for a right secret; 401 for a wrong one (counted), 429 with
 * Retry-After once the client's failures fill the window (a right secret too: guessing must stop).
 * Undefined when the secret is off: nothing to sign in to.
 */
export async function signIn(
  given: string | undefined,
  check: (given: string | undefined) => boolean,
  config: InstanceConfig,
  client: string,
  now: number,
): Promise<string | undefined> {
  if (!config.security.instanceSecretEnabled) return undefined;
  const failures = Keys.signInFailures(client);
  const { max, windowMs } = SIGN_IN_LIMIT;
  const used = await windowUsage(failures, now, windowMs);
  if (used.count >= max) throw tooMany(used.windowEnd - now);
  if (!check(given)) {
    const lease = await leaseFromWindow(failures, now, max, windowMs, 1);
    if (lease.granted === 0) throw tooMany(lease.windowEnd - now);
    throw new UnauthorizedError();
  }
  const key = await sessionKey({ create: true });
  if (key === undefined) throw new Error('The session-signing key could not be made');
  return sessionValue(key, config.security.instanceSecret, now);
}

const tooMany = (ms: number) =>
  new RateLimitedError(Math.max(1, Math.ceil(ms / 1000)), 'Too many failed sign-in attempts. Retry later.');

/** DELETE /auth/sessions: every session signed so far is refused from now on. */
export const signOutEverywhere = (): Promise<void> => replaceSessionKey();
