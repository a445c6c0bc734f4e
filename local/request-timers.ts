/**
 * The local stand-in for request deadline timers (functions/platform/request-timer.ts, contract
 * §5.5.6): in-process timers that, at the very millisecond a reminder or an expiry falls due, hand
 * the flush queue's consumer (functions/jobs/flush.ts, the handler AWS invokes) the record SQS
 * would deliver. A request's timers are withdrawn when it closes or its deadline changes.
 *
 * They survive restarts the way a stored deadline does: at start, every pending request with a
 * deadline is read (one Query of gsi1) and its timers set again; a deadline that passed while the
 * runtime was down fires at once, and so does the latest of its reminders that fell due meanwhile
 * if the deadline is still ahead (the earlier ones are past news, and each is written at most once).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { timersOf } from '../functions/core/request-deadline.js';
import { handler as flushQueueConsumer } from '../functions/jobs/flush.js';
import { installRequestTimers, requestTimerMessage } from '../functions/platform/request-timer.js';
import type { RequestTimer } from '../functions/platform/request-timer.js';
import { remindersSent, requestsWithDeadlines } from '../functions/store/requests-repo.js';
import { FLUSH_QUEUE_NAME, asInvocation, sqsRecord } from './invocations.js';

/** Node's longest timer (about 24.8 days); a longer wait is set again when it ends. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;
/** Runs of a timer whose handler failed before it is given up (as the queue would dead-letter it). */
const MAX_RUNS = 5;

export interface LocalRequestTimerOptions {
  /** The handler run (tests substitute it); by default the flush queue's consumer. */
  handler?: (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** Wait before a failed timer runs again (ms). @default 1000 */
  retryMs?: number;
}

export interface LocalRequestTimers {
  /** Timers waiting (for tests). */
  pending(): number;
  /** Resolves once the timers of the stored deadlines are set (at start). */
  ready: Promise<void>;
  stop(): void;
}

export function startLocalRequestTimers(options: LocalRequestTimerOptions = {}): LocalRequestTimers {
  const run = options.handler ?? flushQueueConsumer;
  const retryMs = options.retryMs ?? 1000;
  const byRequest = new Map<string, Set<NodeJS.Timeout>>();
  let stopped = false;

  const forget = (requestId: string, timer: NodeJS.Timeout) => {
    const set = byRequest.get(requestId);
    set?.delete(timer);
    if (set?.size === 0) byRequest.delete(requestId);
  };

  const fire = (t: RequestTimer, runs: number) => {
    const { body } = requestTimerMessage(t, Date.now());
    const event: SQSEvent = { Records: [sqsRecord({ Body: body }, FLUSH_QUEUE_NAME, runs)] };
    asInvocation(() => run(event))
      .then((out) => {
        if (out.batchItemFailures.length > 0) retry(t, runs);
      })
      .catch((error: unknown) => {
        if (!stopped) console.error('local request timer failed', t, error);
        retry(t, runs);
      });
  };
  const retry = (t: RequestTimer, runs: number) => {
    if (stopped) return;
    if (runs < MAX_RUNS) set({ ...t, fireAtMs: Date.now() + retryMs }, runs + 1, t.fireAtMs);
    else console.error('local request timer: given up (dead-lettered in AWS)', t);
  };
  /** Sets one timer; `originalAtMs` keeps the record's own due time on a retry. */
  const set = (t: RequestTimer, runs = 1, originalAtMs = t.fireAtMs) => {
    if (stopped) return;
    const wait = Math.max(0, t.fireAtMs - Date.now());
    const timer: NodeJS.Timeout = setTimeout(
      () => {
        forget(t.requestId, timer);
        if (stopped) return;
        if (wait > MAX_TIMEOUT_MS) set(t, runs, originalAtMs);
        else fire({ ...t, fireAtMs: originalAtMs }, runs);
      },
      Math.min(wait, MAX_TIMEOUT_MS),
    );
    timer.unref();
    let timers = byRequest.get(t.requestId);
    if (!timers) byRequest.set(t.requestId, (timers = new Set()));
    timers.add(timer);
  };
  const withdraw = (requestId: string) => {
    for (const timer of byRequest.get(requestId) ?? []) clearTimeout(timer);
    byRequest.delete(requestId);
  };

  installRequestTimers({
    arm: async (timers, replace) => {
      if (replace && timers[0]) withdraw(timers[0].requestId);
      for (const t of timers) set(t);
    },
    withdraw,
    // Every timer of a request is set at once here (and withdrawn on close): no chain to carry on.
    chained: false,
  });

  // The stored deadlines: their timers again, the missed ones at once.
  const ready = (async () => {
    const now = Date.now();
    for (const { loc, request } of await requestsWithDeadlines()) {
      if (stopped) return;
      const timers = timersOf(request);
      const missed = timers.filter((t) => t.kind === 'remind' && t.fireAtMs <= now);
      const sent = missed.length > 0 ? await remindersSent(loc) : new Set<number>();
      const latestMissed = missed.at(-1);
      for (const t of timers) {
        if (t.fireAtMs > now || t.kind === 'expire') set(t);
        else if (t === latestMissed && !sent.has(t.before!)) set(t);
      }
    }
  })().catch((error: unknown) => {
    console.error('local request timers: could not read the stored deadlines', error);
  });

  return {
    pending: () => [...byRequest.values()].reduce((n, s) => n + s.size, 0),
    ready,
    stop: () => {
      stopped = true;
      for (const timers of byRequest.values()) for (const timer of timers) clearTimeout(timer);
      byRequest.clear();
      installRequestTimers(undefined);
    },
  };
}
