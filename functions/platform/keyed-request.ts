/**
 * The Idempotency-Key a request holds, reachable from anywhere in the request's async flow
 * (AsyncLocalStorage), so the service's business transaction can store the request's reply in
 * the same transaction (store/idempotency-repo.ts completionInTransaction): a crash between
 * the two can then no longer leave a committed effect with a key a retry executes again
 * (issue 17 finding 6).
 *
 * The slot is entered synchronously when the invocation starts (middy's requestStart, like
 * platform/usage.ts); the idempotency middleware fills it once it holds the key, and the
 * handler wrapper (middleware/http.ts) says how a service's result becomes the reply.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface StoredReply {
  statusCode: number;
  /** The JSON body as sent ('' for a 204). */
  body: string;
}

export interface HeldKey {
  /** The key as the client sent it (trimmed): for the 409 details. */
  key: string;
  keyHash: string;
  fingerprint: string;
  /** Our reservation's token: a write conditioned on it fails if the key lapsed and another request took it. */
  owner: string;
  ttlSeconds: number;
  /** How a service's result becomes this request's reply (absent: the route does not store it in-transaction). */
  replyOf?: (result: unknown) => StoredReply;
  /** The reply a committed business transaction stored with the key. */
  committed?: StoredReply;
}

const slots = new AsyncLocalStorage<{ held?: HeldKey }>();

/** Opens the invocation's slot (synchronously, before the middleware chain). */
export function startKeyedRequest(): void {
  slots.enterWith({});
}

/** Runs `fn` holding no key: a job started from inside a request's flow is not that request. */
export const withoutKeyedRequest = <T>(fn: () => T): T => slots.run({}, fn);

export function holdKey(held: HeldKey): void {
  const slot = slots.getStore();
  if (slot) slot.held = held;
}

/** The key this request holds, if any. */
export function heldKey(): HeldKey | undefined {
  return slots.getStore()?.held;
}
