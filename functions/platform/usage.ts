/**
 * Per-request DynamoDB usage (calls and consumed capacity), gathered by a middleware on the
 * DynamoDB client through AsyncLocalStorage. Logged with every request; the benchmark reads
 * it from response headers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Usage {
  calls: number;
  readUnits: number;
  writeUnits: number;
  /**
   * Wall-clock milliseconds during which at least one storage call (DynamoDB, SQS) was in
   * flight: calls made side by side count once, so this is the storage floor of the latency.
   */
  storageMs: number;
  /**
   * Sequential round trips: how many times the request went from no call in flight to one
   * (calls started while another is in flight ride the same trip).
   */
  trips: number;
}

/** The counters plus the bookkeeping of calls in flight. */
interface Tally extends Usage {
  inFlight: number;
  busySince: number;
}

const store = new AsyncLocalStorage<Tally>();

const freshTally = (): Tally => ({
  calls: 0,
  readUnits: 0,
  writeUnits: 0,
  storageMs: 0,
  trips: 0,
  inFlight: 0,
  busySince: 0,
});

export function withUsage<T>(fn: () => Promise<T>): { usage: Usage; result: Promise<T> } {
  const usage = freshTally();
  return { usage, result: store.run(usage, fn) };
}

/**
 * Starts counting for the rest of the current invocation (everything it awaits from here). For
 * middy's `requestStart` hook, which runs synchronously before the middleware chain.
 */
export function startUsage(): void {
  store.enterWith(freshTally());
}

/**
 * Marks a storage call as started; the returned function marks it as finished. Feeds
 * storageMs and trips (see Usage).
 */
export function callStarted(): () => void {
  const tally = store.getStore();
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
  const tally = store.getStore();
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
  const usage = store.getStore();
  if (!usage) return;
  usage.calls += 1;
  for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) {
    const reads = c.ReadCapacityUnits ?? (kind === 'read' ? (c.CapacityUnits ?? 0) : 0);
    const writes = c.WriteCapacityUnits ?? (kind === 'write' ? (c.CapacityUnits ?? 0) : 0);
    usage.readUnits += reads;
    usage.writeUnits += writes;
  }
}
