/**
 * An event stream authenticated by a browser session closes within SESSION_CHECK_MS (+ one read) of
 * the session ending (contract §1.11.1): signed out, signed out everywhere, the secret rotated, or
 * expired. The stream (functions/http/events/stream.ts) reads the session again every
 * SESSION_CHECK_MS:
 * - its record, bypassing the instance's cache (one strongly consistent GetItem, 1 RRU): a sign-out,
 *   a sign-out everywhere and a secret changed through PATCH /config/admin delete it;
 * - when the stack keeps the instance secret in the table (INSTANCE_SECRET_IN_TABLE), that item too
 *   (one more GetItem, 1 RRU): the owner rotates it with a put of their own, which nothing else
 *   sees in time (the functions' cache keeps it five minutes). Otherwise the secret comes from the
 *   deployment (a change is a new container) or from the stored configuration (whose change
 *   revokes every session, above), and this instance's configuration is compared, with no call.
 * A check that fails to read ends nothing: the next one tries again.
 */
import { env } from '../platform/env.js';
import { logger } from '../platform/logger.js';
import { storedSecretNow } from '../store/secrets-repo.js';
import { lastKnownConfig } from './instance-config.js';
import { recordedExpiry, secretDigest, sessionCheckMs } from './sessions.js';
import type { Session } from './sessions.js';

/** Whether the session has ended: no record, expired, or signed under a secret no longer in force. */
export async function sessionEnded(session: Session, now: number): Promise<boolean> {
  const config = await lastKnownConfig();
  // The secret was turned off (by the deployment): nothing is needed to stay connected.
  if (!config.security.instanceSecretEnabled) return false;
  const [expires, tableSecret] = await Promise.all([
    recordedExpiry(session.id, now, true),
    env().INSTANCE_SECRET_IN_TABLE ? storedSecretNow('INSTANCE') : Promise.resolve(undefined),
  ]);
  if (expires === undefined || expires <= now) return true;
  const secret = tableSecret ?? config.security.instanceSecret;
  return secretDigest(secret) !== session.secretDigest;
}

/**
 * Checks `session` every `everyMs` until stopped, and calls `onEnded` once when it has ended.
 * Returns the stop function.
 */
export function watchSession(session: Session, onEnded: () => void, everyMs = sessionCheckMs()): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void check(), everyMs);
    timer.unref?.();
  };
  const check = async () => {
    try {
      if (await sessionEnded(session, Date.now())) {
        if (!stopped) onEnded();
        stopped = true;
        return;
      }
    } catch (error) {
      logger.warn('session check failed; checking again', { error });
    }
    schedule();
  };
  schedule();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}
