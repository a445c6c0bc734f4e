/**
 * The invocation's deadline (issue 25 item 3). Lambda ends a function at its timeout, and API
 * Gateway then answers a bare 500 that says nothing about what was written. So an HTTP request
 * knows when its function ends (the context's getRemainingTimeInMillis at its start; the local
 * runtime gives the same), and its writes plan with it:
 * - a transaction (or a single-item write's retry) starts only while COMMIT_RESERVE_MS are left;
 *   later, the request gives up with 429 and Retry-After, having written nothing (store/db.ts);
 * - no DynamoDB call runs into the last CALL_MARGIN_MS: the request answers in them instead of
 *   being cut off.
 *
 * A Deadline is a value, passed as an argument (issue 35): the HTTP middleware makes it and hands
 * it to the handler beside `keyed`, the handler to its service, the service to the store calls
 * that plan with it (store/db.ts `transact`, `retryConflicts`; core/chat-recompute.ts's budget).
 * Outside an HTTP invocation (jobs, tests calling services directly) there is none: NO_DEADLINE,
 * said where the call is made. Nothing is inherited through the async flow, so a job started from
 * inside a request (a stream timer armed by a message create) never has the request's deadline.
 */

/**
 * Time a transaction needs to be started at all: its own call (DynamoDB Local on a loaded 2-core
 * machine takes up to ~3.5 s for one; DynamoDB milliseconds), what follows it (the dispatch
 * signal, the stream timer) and the answer. With the 15 s function timeout, writes start
 * within the first 8 s.
 */
export const COMMIT_RESERVE_MS = 7000;

/** No DynamoDB call may still be waited for this close to the function's end. */
export const CALL_MARGIN_MS = 2000;

/** When the invocation's function ends (epoch milliseconds; Infinity: no deadline). */
export interface Deadline {
  readonly endsAt: number;
}

/** No deadline: a job, a test calling a service, the event stream (which ends itself). */
export const NO_DEADLINE: Deadline = Object.freeze({ endsAt: Infinity });

/** The deadline `remainingMs` from now (undefined: none). */
export const deadlineIn = (remainingMs: number | undefined): Deadline =>
  remainingMs === undefined ? NO_DEADLINE : Object.freeze({ endsAt: Date.now() + remainingMs });

/** Milliseconds until the function's timeout (Infinity: no deadline). */
export const timeLeftMs = (deadline: Deadline): number => deadline.endsAt - Date.now();

/** Whether a write (a transaction, a retry) may still start: COMMIT_RESERVE_MS are left. */
export const timeForWrite = (deadline: Deadline): boolean => timeLeftMs(deadline) >= COMMIT_RESERVE_MS;

/** How long a DynamoDB call may still be waited for (Infinity: no deadline; <= 0: none). */
export const callAllowanceMs = (deadline: Deadline): number => timeLeftMs(deadline) - CALL_MARGIN_MS;
