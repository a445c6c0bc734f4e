/**
 * Fixed-window write counters shared by every function instance (contract §1.12). One
 * item per client holds the window start and its count.
 *
 * An instance does not count one request at a time: it leases a block of the window's
 * writes with one conditional UpdateItem and spends them locally (middleware/rate-limit.ts).
 * The counter therefore holds the writes handed out to instances, never more than `max`: the
 * limit is never exceeded, and the approximation is on the strict side (a block leased by one
 * instance and not used up is not available to another in that window).
 *
 * A block is at most `want`, and at most a tenth of what the window has left (at least 1): the
 * lease's condition keeps nine more such blocks in the window. With a fixed tenth of the limit,
 * ten instances (of any write functions: the counter is the client's) held the whole window
 * between them after one write each, and the eleventh was refused although the client had made
 * eleven writes (seen on the rehearsal: 30 concurrent writes, 12 environments, 429 with a limit
 * of a million). With a tenth of what is left, the window fills only after dozens of
 * instances lease (about 30 for a limit of 50, 120 for a million).
 * Cost: one UpdateItem per lease; a second one when a window rolls over, when the caller's
 * `want` is more than a tenth of what is left (a cold instance in a window others opened), or
 * when a concurrent lease took what this one counted on.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { ddb, tableName, updateIf } from './db.js';
import { Keys } from './keys.js';

/**
 * `granted` >= 1 writes of the window that ends at `windowEnd` (epoch ms), or none until then;
 * `left`: what the window had left after this lease, when the counter said.
 */
export interface Lease {
  granted: number;
  windowEnd: number;
  left?: number;
}

/** The block to lease when `left` writes are left: a tenth of them, at most `want`, at least 1. */
export const shareOf = (left: number, want: number): number => Math.max(1, Math.min(want, Math.floor(left / 10)));

/** The count a lease of `size` may find: one of 1 needs a free write, a larger one nine more blocks after it. */
const roomFor = (max: number, size: number): number => (size === 1 ? max - 1 : max - 10 * size);

/** `left`: what this window had left when the caller last leased from it (sizes the first try). */
export const leaseWrites = (
  client: string,
  now: number,
  max: number,
  windowMs: number,
  want: number,
  left?: number,
): Promise<Lease> => leaseFromWindow(Keys.rateLimit(client), now, max, windowMs, want, left);

/** The same fixed-window counter at any key (Keys.signInFailures counts failed sign-ins with it). */
export async function leaseFromWindow(
  key: { pk: string; sk: string },
  now: number,
  max: number,
  windowMs: number,
  want: number,
  left?: number,
): Promise<Lease> {
  const ttl = Math.ceil((now + windowMs) / 1000) + 60;
  let size = left === undefined ? Math.max(1, Math.min(want, max)) : shareOf(left, want);
  const lease = await retry(LEASE_RACES, async (): Promise<Lease | undefined> => {
    // 1. Lease from the open window, if there is one with room for `size` more.
    const taken = await updateIf({
      Key: key,
      UpdateExpression: 'SET #count = #count + :size',
      ConditionExpression: 'attribute_exists(pk) AND windowStart > :openAfter AND #count <= :room',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':size': size, ':openAfter': now - windowMs, ':room': roomFor(max, size) },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (taken.ok) {
      const windowEnd = Number(taken.item?.windowStart) + windowMs;
      return { granted: size, windowEnd, left: max - Number(taken.item?.count) };
    }
    const { old } = taken;
    if (old && Number(old.windowStart) > now - windowMs) {
      const windowEnd = Number(old.windowStart) + windowMs;
      const remaining = max - Number(old.count);
      // The window is open and full: not counted, retry after it ends.
      if (remaining <= 0) return { granted: 0, windowEnd };
      // Less room than `size` needs: lease a tenth of what is left (a concurrent lease may take it first).
      size = shareOf(remaining, want);
      return undefined;
    }
    // 2. No open window: this request opens one (unless a concurrent request just did).
    size = shareOf(max, want);
    const opened = await updateIf({
      Key: key,
      UpdateExpression: 'SET windowStart = :now, #count = :size, #type = :type, #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(pk) OR windowStart <= :openAfter',
      ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':now': now,
        ':size': size,
        ':openAfter': now - windowMs,
        ':type': 'rate-limit',
        ':ttl': ttl,
      },
    });
    return opened.ok ? { granted: size, windowEnd: now + windowMs, left: max - size } : undefined;
  });
  // Lost races in a row: the window is under heavy contention; let this one through.
  return lease ?? { granted: 1, windowEnd: now + 1 };
}

/**
 * A lease sized on what the window had left, or lost to a concurrent one (the window filled or
 * opened meanwhile), is tried again at once on what the failed condition returned, 5 tries in all
 * (the first may only learn the count): past that the window is under heavy contention, and the
 * write is let through rather than kept waiting.
 */
const LEASE_RACES: RetryPolicy<Lease | undefined> = {
  attempts: 5,
  backoff: () => 0,
  retryResult: (lease) => lease === undefined,
};

/** How much of a window counter is spent now: 0 when no window is open (one strongly consistent read). */
export async function windowUsage(
  key: { pk: string; sk: string },
  now: number,
  windowMs: number,
): Promise<{ count: number; windowEnd: number }> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  const start = Number(out.Item?.windowStart);
  if (!out.Item || !(start > now - windowMs)) return { count: 0, windowEnd: now + windowMs };
  return { count: Number(out.Item.count), windowEnd: start + windowMs };
}
