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
}

const store = new AsyncLocalStorage<Usage>();

export function withUsage<T>(fn: () => Promise<T>): { usage: Usage; result: Promise<T> } {
  const usage: Usage = { calls: 0, readUnits: 0, writeUnits: 0 };
  return { usage, result: store.run(usage, fn) };
}

/**
 * Starts counting for the rest of the current invocation (everything it awaits from here). For
 * middy's `requestStart` hook, which runs synchronously before the middleware chain.
 */
export function startUsage(): void {
  store.enterWith({ calls: 0, readUnits: 0, writeUnits: 0 });
}

/** The usage counted so far in this invocation, if counting was started. */
export function currentUsage(): Usage | undefined {
  return store.getStore();
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
