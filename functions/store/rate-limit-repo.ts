/**
 * Fixed-window write counters shared by every function instance (contract §1.12). One
 * item per client holds the window start and its count.
 *
 * An instance does not count one request at a time: it leases a block of the window's
 * writes (`want`, fewer when fewer are left) with one conditional UpdateItem and spends
 * them locally (middleware/rate-limit.ts). The counter therefore holds the writes handed out
 * to instances, never more than `max`: the limit is never exceeded, and the approximation is
 * on the strict side (a block leased by one instance and not used up is not available to
 * another in that window). Cost: one UpdateItem per lease; a second one when a window rolls
 * over or when fewer than `want` writes are left.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { ddb, tableName, updateIf } from './db.js';
import { Keys } from './keys.js';

/** `granted` >= 1 writes of the window that ends at `windowEnd` (epoch ms), or none until then. */
export interface Lease {
  granted: number;
  windowEnd: number;
}

export const leaseWrites = (client: string, now: number, max: number, windowMs: number, want: number): Promise<Lease> =>
  leaseFromWindow(Keys.rateLimit(client), now, max, windowMs, want);

/** The same fixed-window counter at any key (Keys.signInFailures counts failed sign-ins with it). */
export async function leaseFromWindow(
  key: { pk: string; sk: string },
  now: number,
  max: number,
  windowMs: number,
  want: number,
): Promise<Lease> {
  const ttl = Math.ceil((now + windowMs) / 1000) + 60;
  let size = Math.max(1, Math.min(want, max));
  const lease = await retry(LEASE_RACES, async (): Promise<Lease | undefined> => {
    // 1. Lease from the open window, if there is one with room for `size` more.
    const taken = await updateIf({
      Key: key,
      UpdateExpression: 'SET #count = #count + :size',
      ConditionExpression: 'attribute_exists(pk) AND windowStart > :openAfter AND #count <= :room',
      ExpressionAttributeNames: { '#count': 'count' },
      ExpressionAttributeValues: { ':size': size, ':openAfter': now - windowMs, ':room': max - size },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    if (taken.ok) return { granted: size, windowEnd: Number(taken.item?.windowStart) + windowMs };
    const { old } = taken;
    if (old && Number(old.windowStart) > now - windowMs) {
      const windowEnd = Number(old.windowStart) + windowMs;
      const left = max - Number(old.count);
      // The window is open and full: not counted, retry after it ends.
      if (left <= 0) return { granted: 0, windowEnd };
      // Fewer than `size` left: lease what is left (a concurrent lease may take it first).
      size = Math.min(size, left);
      return undefined;
    }
    // 2. No open window: this request opens one (unless a concurrent request just did).
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
    return opened.ok ? { granted: size, windowEnd: now + windowMs } : undefined;
  });
  // Lost races in a row: the window is under heavy contention; let this one through.
  return lease ?? { granted: 1, windowEnd: now + 1 };
}

/**
 * A lease lost to a concurrent one (the window filled or opened meanwhile) is tried again at once
 * on what the failed condition returned, 4 tries in all: past that the window is under heavy
 * contention, and the write is let through rather than kept waiting.
 */
const LEASE_RACES: RetryPolicy<Lease | undefined> = {
  attempts: 4,
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
