/**
 * The invocation's deadline (issue 25 item 3). Lambda ends a function at its timeout, and API
 * Gateway then answers a bare 500 that says nothing about what was written. So an HTTP request
 * knows when its function ends (the context's getRemainingTimeInMillis at its start; the local
 * runtime gives the same), and its writes plan with it:
 * - a transaction (or a single-item write's retry) starts only while COMMIT_RESERVE_MS are left;
 *   later, the request gives up with 429 and Retry-After, having written nothing (store/db.ts);
 * - no DynamoDB call runs into the last CALL_MARGIN_MS: the request answers in them instead of
 *   being cut off.
 * Outside an HTTP invocation (jobs, tests calling services directly) there is no deadline.
 *
 * The slot is entered synchronously when the invocation starts (middy's requestStart, like
 * platform/usage.ts), so it follows the request's async flow and no other.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Time a transaction needs to be started at all: its own call (DynamoDB Local on a loaded 2-core
 * machine takes up to ~3.5 s for one; DynamoDB milliseconds), what follows it (the dispatch
 * signal, the stream timer) and the answer. With the 15 s function timeout, writes start
 * within the first 8 s.
 */
export const COMMIT_RESERVE_MS = 7000;

/** No DynamoDB call may still be waited for this close to the function's end. */
export const CALL_MARGIN_MS = 2000;

const slots = new AsyncLocalStorage<{ endsAt: number }>();

/** Opens the invocation's slot: it ends `remainingMs` from now (undefined: no deadline). */
export function startDeadline(remainingMs: number | undefined): void {
  slots.enterWith({ endsAt: remainingMs === undefined ? Infinity : Date.now() + remainingMs });
}

/**
 * Runs `fn` with no deadline: a job the local runtime starts from inside a request's async flow (a
 * stream timer armed by a message create) is its own invocation, as in AWS, not the request's.
 */
export const withoutDeadline = <T>(fn: () => T): T => slots.run({ endsAt: Infinity }, fn);

/** Milliseconds until the function's timeout (Infinity outside an HTTP invocation). */
export function timeLeftMs(): number {
  const slot = slots.getStore();
  return slot ? slot.endsAt - Date.now() : Infinity;
}

/** Whether a write (a transaction, a retry) may still start: COMMIT_RESERVE_MS are left. */
export const timeForWrite = (): boolean => timeLeftMs() >= COMMIT_RESERVE_MS;

/** How long a DynamoDB call may still be waited for (Infinity: no deadline; <= 0: none). */
export const callAllowanceMs = (): number => timeLeftMs() - CALL_MARGIN_MS;
