/**
 * Per-request DynamoDB usage (calls and consumed capacity), gathered by a middleware on the
 * DynamoDB client into the invocation's record (platform/invocation.ts). Logged with every
 * request; the benchmark reads it from response headers.
 */
import { currentInvocation, withRecord } from './invocation.js';
import type { Usage } from './invocation.js';

export type { Usage };

/** Counts the calls `fn` makes, apart from the invocation's (see withRecord). */
export function withUsage<T>(fn: () => Promise<T>): { usage: Usage; result: Promise<T> } {
  const { record, result } = withRecord(fn);
  return { usage: record.usage, result };
}

/**
 * Marks a storage call as started; the returned function marks it as finished. Feeds
 * storageMs and trips (see Usage).
 */
export function callStarted(): () => void {
  const tally = currentInvocation()?.usage;
  if (!tally) return () => undefined;
  if (tally.inFlight === 0) {
    tally.trips += 1;
    tally.busySince = performance.now();
  }
  tally.inFlight += 1;
  let done = false;
  return () => {
    if (done) return;
    done = true;
    tally.inFlight -= 1;
    if (tally.inFlight === 0) tally.storageMs += performance.now() - tally.busySince;
  };
}

/** The usage counted so far in this invocation, if counting was started. */
export function currentUsage(): Usage | undefined {
  const tally = currentInvocation()?.usage;
  if (!tally) return undefined;
  const { calls, readUnits, writeUnits, storageMs, trips } = tally;
  return { calls, readUnits, writeUnits, storageMs: Math.round(storageMs * 100) / 100, trips };
}

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

export function recordCall(consumed: Capacity | Capacity[] | undefined, kind: 'read' | 'write'): void {
  const usage = currentInvocation()?.usage;
  if (!usage) return;
  usage.calls += 1;
  for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const reads = c.ReadCapacityUnits ?? (kind === 'read' ? (c.CapacityUnits ?? 0) : 0);
    const writes = c.WriteCapacityUnits ?? (kind === 'write' ? (c.CapacityUnits ?? 0) : 0);
    usage.readUnits += reads;
    usage.writeUnits += writes;
  }
}
