/**
 * What one invocation keeps for the AWS SDK clients' middlewares (store/db.ts, platform/queues.ts):
 * its usage tally (platform/usage.ts) and the deadline its calls end by (store/db.ts
 * `withinDeadline`). A client middleware is the one reader nobody can hand an argument to, so the
 * record is found, not passed; everything that decides with the deadline (whether a transaction,
 * a retry or a redo may start) is handed the Deadline itself (platform/deadline.ts).
 *
 * The record lives in the invocation context the runtime keeps (functions/ keeps no async-flow
 * storage of its own, issue 35: eslint.config.js refuses node:async_hooks here), that is
 * `globalThis.awslambda.InvokeStore`: Lambda's Node.js runtime provides it for invocations running
 * side by side in one execution environment, and the local runtime installs it with one context
 * per request and per job run (local/invocations.ts `asInvocation`). A job run is its own
 * invocation: it never finds the record of the request it was started from. Without an invocation
 * context (a Lambda instance serving one invocation at a time, a test calling a handler directly),
 * the record is the process's one slot, replaced as each invocation starts.
 */
import type { Deadline } from './deadline.js';
import { NO_DEADLINE } from './deadline.js';

/** An invocation's DynamoDB usage (platform/usage.ts). */
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
export interface Tally extends Usage {
  inFlight: number;
  busySince: number;
}

export const freshTally = (): Tally => ({
  calls: 0,
  readUnits: 0,
  writeUnits: 0,
  storageMs: 0,
  trips: 0,
  inFlight: 0,
  busySince: 0,
});

export interface InvocationRecord {
  usage: Tally;
  /** NO_DEADLINE for the event stream (which ends itself) and for counting-only scopes (withUsage). */
  deadline: Deadline;
}

type Context = Record<PropertyKey, unknown>;

/** The part of Lambda's InvokeStore (@aws/lambda-invoke-store) read here. */
interface InvokeStore {
  hasContext(): boolean;
  getContext(): Context | undefined;
  get(key: PropertyKey): unknown;
  set(key: PropertyKey, value: unknown): void;
  run<T>(context: Context, fn: () => T): T;
}

const RECORD = Symbol.for('chat-relay.invocation-record');

const invokeStore = (): InvokeStore | undefined =>
  (globalThis as { awslambda?: { InvokeStore?: InvokeStore } }).awslambda?.InvokeStore;

/** The record outside any invocation context (one invocation at a time in the process). */
let slot: InvocationRecord | undefined;

/**
 * Opens the current invocation's record (middy's requestStart, before the middleware chain):
 * every SDK call of the invocation from here on is counted, and waited for only until `deadline`.
 */
export function startInvocation(deadline: Deadline): InvocationRecord {
  const record: InvocationRecord = { usage: freshTally(), deadline };
  const store = invokeStore();
  if (store?.hasContext()) store.set(RECORD, record);
  else slot = record;
  return record;
}

/** The current invocation's record, if it opened one (an HTTP invocation, a withUsage scope). */
export function currentInvocation(): InvocationRecord | undefined {
  const store = invokeStore();
  return store?.hasContext() ? (store.get(RECORD) as InvocationRecord | undefined) : slot;
}

/**
 * Runs `fn` with a record of its own (no deadline): the calls it makes are counted apart from the
 * invocation's. For the event stream's body, and for tests and benchmarks that measure a service.
 * Without an invocation store (outside a runtime), scopes must not overlap.
 */
export function withRecord<T>(fn: () => Promise<T>): { record: InvocationRecord; result: Promise<T> } {
  const record: InvocationRecord = { usage: freshTally(), deadline: NO_DEADLINE };
  const store = invokeStore();
  if (store) return { record, result: store.run({ ...store.getContext(), [RECORD]: record }, fn) };
  return {
    record,
    result: (async () => {
      const outer = slot;
      slot = record;
      try {
        return await fn();
      } finally {
        slot = outer;
      }
    })(),
  };
}
