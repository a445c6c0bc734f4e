/**
 * The timers of request deadlines (contract §5.5.6): each reminder and the expiry of a pending
 * request's deadline fire once, on time, and do nothing if the request closed or its deadline
 * changed meanwhile (a timer carries the deadline's `at` it was set for, and its handler checks it).
 *
 * In AWS a timer is a delayed record `{ requestTimer }` on the dispatch flush queue, the queue that
 * already carries the stream checks, so deadlines add no event source mapping and no idle poll:
 * - due within SQS's 900 s: one message delayed to the second it falls due;
 * - further: a message delayed 900 s, whose handler (functions/jobs/flush.ts → core/request-expiry.ts)
 *   sends it on again until it is due: one hop per 15 minutes of waiting;
 * - a request's timers wait as one chain: only the soonest is on the queue, and when a reminder has
 *   fired the handler sends the next (armNextRequestTimer). Waiting for the expiry and two reminders
 *   this way costs the hops of one wait, not of three, and a request answered meanwhile ends its
 *   chain at the next timer instead of every timer running out.
 * SQS delivers a delayed message within about a second of its delay, inside the 5 s the contract
 * allows. docs/cost.md prices this against EventBridge Scheduler (60 s precision, so it would need a
 * second, delayed-message stage anyway) and the Step Functions wait ($25 per million transitions).
 * A timer lost for good (a send that failed after the commit) is caught by the every-minute sweep
 * (functions/jobs/dispatch-sweep.ts), which expires overdue requests.
 *
 * The local runtime installs in-process timers instead (local/request-timers.ts), which run the
 * same handler at the exact millisecond and withdraw a request's timers when it closes or its
 * deadline changes.
 */
import { env } from './env.js';
import { logger } from './logger.js';
import { MAX_DELAY_SECONDS, sendToFlushQueue } from './queues.js';

/** One timer of a request's deadline: a reminder or the expiry. */
export interface RequestTimer {
  requestId: string;
  kind: 'expire' | 'remind';
  /** The deadline's `at` it was set for: a timer of a changed or removed deadline finds it different and does nothing. */
  at: string;
  /** For a reminder: its entry of remind_before_seconds. */
  before?: number;
  fireAtMs: number;
}

export interface RequestTimerStarter {
  /**
   * Sets these timers; with `replace` (all of one request), they replace any the request had. A
   * chained starter sets only the soonest of them.
   */
  arm(timers: readonly RequestTimer[], replace: boolean): Promise<void>;
  /** Whether a request's timers wait one at a time, each fired reminder setting the next (the queue's). */
  readonly chained: boolean;
  /** Drops a request's timers not yet fired (best effort: a fired stale timer does nothing anyway). */
  withdraw(requestId: string): void;
}

let installed: RequestTimerStarter | undefined;

/** Replaces the AWS starter (the local runtime's timers); `undefined` restores it. Returns the one replaced. */
export function installRequestTimers(starter: RequestTimerStarter | undefined): RequestTimerStarter | undefined {
  const replaced = installed;
  installed = starter;
  return replaced;
}

/** The timer of `timers` (at least one) that falls due first: the one a chained starter sets. */
export const soonestTimer = (timers: readonly RequestTimer[]): RequestTimer =>
  timers.reduce((a, b) => (b.fireAtMs < a.fireAtMs ? b : a));

/** The flush-queue record of a timer: its body and the delay to send it with (whole seconds, ≤ 900). */
export function requestTimerMessage(timer: RequestTimer, nowMs: number): { body: string; delaySeconds: number } {
  const waitSeconds = Math.max(0, Math.ceil((timer.fireAtMs - nowMs) / 1000));
  return { body: JSON.stringify({ requestTimer: timer }), delaySeconds: Math.min(MAX_DELAY_SECONDS, waitSeconds) };
}

const sqsStarter: RequestTimerStarter = {
  arm: async (timers) => {
    if (!env().FLUSH_QUEUE_URL) {
      logger.warn('request timers not configured: overdue deadlines are expired by the sweep', {
        requestId: timers[0]?.requestId,
      });
      return;
    }
    const message = requestTimerMessage(soonestTimer(timers), Date.now());
    await sendToFlushQueue(message.body, message.delaySeconds);
  },
  withdraw: () => {},
  chained: true,
};

/**
 * Sets a request's timers after the commit that gave it its deadline. Never throws: the request
 * is committed, and the sweep expires it if its expiry timer is lost.
 */
export async function armRequestTimers(timers: readonly RequestTimer[]): Promise<void> {
  if (timers.length === 0) return;
  try {
    await (installed ?? sqsStarter).arm(timers, true);
  } catch (error) {
    logger.error('could not set the request timers', { requestId: timers[0]?.requestId, error });
  }
}

/** A timer that came early (a 900 s hop of a longer wait) goes on waiting. Throws so SQS retries on failure. */
export async function rearmRequestTimer(timer: RequestTimer): Promise<void> {
  await (installed ?? sqsStarter).arm([timer], false);
}

/**
 * After `fired` (a reminder) ran, or found itself written already, on a request still pending with
 * that deadline: a chained starter sets the next of the deadline's `timers` (the soonest after it).
 * Throws so SQS delivers `fired` again on failure (its reminder is written once anyway).
 */
export async function armNextRequestTimer(fired: RequestTimer, timers: readonly RequestTimer[]): Promise<void> {
  const starter = installed ?? sqsStarter;
  if (!starter.chained) return;
  const later = timers.filter((t) => t.fireAtMs > fired.fireAtMs);
  if (later.length > 0) await starter.arm(later, false);
}

/** After a closing or a deadline change: the request's timers not yet fired are dropped. */
export function withdrawRequestTimers(requestId: string): void {
  installed?.withdraw(requestId);
}
