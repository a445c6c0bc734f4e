/**
 * Guessing the instance secret is limited on every path (docs/web-app.md "Browser sessions", "Guessing"):
 * a failed sign-in (POST /auth/session), a wrong `Authorization: Bearer` and a wrong `?token=`
 * count against one window per client (Keys.signInFailures, a fixed-window counter like the write
 * rate limit's): past GUESS_LIMIT every attempt answers 429 with Retry-After until the window ends.
 *
 * A request carrying the right secret makes no storage call for this: it passes, unless this
 * function instance has itself seen the client's window full (lockouts, kept until the window
 * ends), in which case it is refused like a wrong one, so that an answer past the limit tells a
 * guesser nothing. The sign-in still reads the window first (it is rare, and a browser that
 * guessed may not sign in through an instance that has not seen it).
 *
 * A request without any credential guesses nothing and is not counted; neither is a session
 * cookie that fails its check (its value is signed: nothing to guess, and a revoked one is sent by
 * an honest browser on every request until it signs in again).
 */
import { RateLimitedError, UnauthorizedError } from '../errors.js';
import { Keys } from '../store/keys.js';
import { leaseFromWindow, windowUsage } from '../store/rate-limit-repo.js';

/** At most this many failed attempts per client and window, then 429 until the window ends. */
export const GUESS_LIMIT = { max: 10, windowMs: 10 * 60_000 };

/** Clients this instance has seen over the limit, and when their window ends (epoch ms). */
const lockouts = new Map<string, number>();
const MAX_LOCKOUTS = 10_000;

const tooMany = (ms: number, message: string) => new RateLimitedError(Math.max(1, Math.ceil(ms / 1000)), message);
const SIGN_IN_MESSAGE = 'Too many failed sign-in attempts. Retry later.';
const SECRET_MESSAGE = 'Too many failed attempts with the instance secret. Retry later.';

function remember(client: string, windowEnd: number): void {
  if (lockouts.size >= MAX_LOCKOUTS) lockouts.clear();
  lockouts.set(client, windowEnd);
}

/** Whether this instance knows of any client over the limit (no need to name the client otherwise). */
export const anyLockoutKnown = (): boolean => lockouts.size > 0;

/** Throws the 429 when this instance has seen `client` over the limit in a window still open (no storage call). */
export function refuseKnownLockout(client: string, now: number, message = SECRET_MESSAGE): void {
  const end = lockouts.get(client);
  if (end === undefined) return;
  if (end > now) throw tooMany(end - now, message);
  lockouts.delete(client);
}

/**
 * Counts one failed attempt of `client` and throws: 401 while the window has room (one
 * conditional UpdateItem), 429 once it is full (and this instance remembers it).
 */
export async function failedAttempt(client: string, now: number, message = SECRET_MESSAGE): Promise<never> {
  refuseKnownLockout(client, now, message);
  const { max, windowMs } = GUESS_LIMIT;
  const lease = await leaseFromWindow(Keys.signInFailures(client), now, max, windowMs, 1);
  if (lease.granted === 0) {
    remember(client, lease.windowEnd);
    throw tooMany(lease.windowEnd - now, message);
  }
  throw new UnauthorizedError();
}

/**
 * The sign-in's check: refused (429) while the client's window is full, the right secret too (one
 * strongly consistent read); a wrong secret is counted (failedAttempt).
 */
export async function checkSignIn(client: string, right: boolean, now: number): Promise<void> {
  refuseKnownLockout(client, now, SIGN_IN_MESSAGE);
  const { max, windowMs } = GUESS_LIMIT;
  const used = await windowUsage(Keys.signInFailures(client), now, windowMs);
  if (used.count >= max) {
    remember(client, used.windowEnd);
    throw tooMany(used.windowEnd - now, SIGN_IN_MESSAGE);
  }
  if (!right) await failedAttempt(client, now, SIGN_IN_MESSAGE);
}

/** Tests: forget what this instance learned, as a new instance would. */
export function forgetLockoutsForTests(): void {
  lockouts.clear();
}
