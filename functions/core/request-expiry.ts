/**
 * What a deadline's timer does when it fires (contract §5.5.6), and the sweep that catches a lost
 * one (a reminder's or the expiry's). Every step is conditional on the request as it is when it fires, so a timer that is stale
 * (the request closed, or its deadline changed or went) or repeated (SQS delivers at least once)
 * does nothing:
 * - a reminder: the `request.reminder` event, written with a mark that lets each reminder of a
 *   deadline be written once (its push follows from the event, core/push.ts); then, where timers
 *   wait as a chain (AWS: platform/request-timer.ts), the deadline's next timer is set;
 * - the expiry: the request closed as its `on_expiry` says, as a client would close it, with
 *   `expired_at`, `reason: "deadline"` and an `expired` entry in the decision log
 *   (core/request-closing.ts), conditioned on it being pending with this very deadline.
 */
import { EVENTS } from '../model/events.js';
import type { RequestRecord } from '../model.js';
import { NO_DEADLINE } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import { armNextRequestTimer, rearmRequestTimer } from '../platform/request-timer.js';
import type { RequestTimer } from '../platform/request-timer.js';
import { guarded, transact } from '../store/db.js';
import { withEvents } from '../store/events-repo.js';
import * as Store from '../store/requests-repo.js';
import type { RequestLocation } from '../store/requests-repo.js';
import { closeRequest } from './request-closing.js';
import { timersOf } from './request-deadline.js';
import type { ResolutionPayload } from './request-config.js';

/** A timer this much early still fires (clock skew between hosts); earlier, it waits again. */
const EARLY_TOLERANCE_MS = 250;

export type TimerOutcome = 'waiting' | 'stale' | 'reminded' | 'expired';

/** Thrown inside a timer's transaction when the request moved on: nothing was written. */
class Stale extends Error {}

/** Runs one fired timer. Throws only on a storage failure (the timer then comes back). */
export async function fireRequestTimer(
  config: InstanceConfig,
  timer: RequestTimer,
  nowMs = Date.now(),
): Promise<TimerOutcome> {
  if (timer.fireAtMs - nowMs > EARLY_TOLERANCE_MS) {
    // A hop of a wait longer than SQS's 900 s delay, or a timer delivered early.
    await rearmRequestTimer(timer);
    return 'waiting';
  }
  const loc = await Store.locate(timer.requestId);
  const request = loc && (await Store.getRequest(loc));
  return loc && request ? fireOn(config, timer, loc, request, nowMs) : 'stale';
}

/** A due timer run on its request as just read (consistently). */
async function fireOn(
  config: InstanceConfig,
  timer: RequestTimer,
  loc: RequestLocation,
  request: RequestRecord,
  nowMs: number,
): Promise<TimerOutcome> {
  if (request.status !== 'pending' || request.deadline?.at !== timer.at) return 'stale';
  try {
    if (timer.kind === 'remind') {
      if (timer.before === undefined || !request.deadline.remind_before_seconds.includes(timer.before)) return 'stale';
      let outcome: TimerOutcome = 'reminded';
      try {
        await remind(loc, request, timer.before, nowMs);
      } catch (error) {
        // Written already (SQS delivered this record again): the chain still goes on.
        if (!(error instanceof Stale)) throw error;
        outcome = 'stale';
      }
      await armNextRequestTimer(timer, timersOf(request));
      return outcome;
    }
    await expire(config, loc, request);
    return 'expired';
  } catch (error) {
    if (error instanceof Stale) return 'stale';
    throw error;
  }
}

async function remind(loc: RequestLocation, request: RequestRecord, before: number, nowMs: number): Promise<void> {
  const deadline = request.deadline!;
  const secondsLeft = Math.max(0, Math.round((Date.parse(deadline.at) - nowMs) / 1000));
  const event = EVENTS.requestReminder.of({
    chatId: loc.chatId,
    requestId: request.id,
    type: request.type,
    title: request.title,
    deadlineAt: deadline.at,
    secondsLeft,
  });
  await withEvents([event], new Date(nowMs).toISOString(), (eventItems) =>
    transact([guarded(Store.markReminded(loc, request, before), () => new Stale()), ...eventItems], NO_DEADLINE),
  );
}

async function expire(config: InstanceConfig, loc: RequestLocation, request: RequestRecord): Promise<void> {
  const deadline = request.deadline!;
  const resolve = deadline.on_expiry === 'resolve';
  await closeRequest(
    config,
    loc,
    request,
    {
      status: resolve ? 'resolved' : 'cancelled',
      resolvedBy: resolve ? 'backend' : null,
      payload: resolve ? (deadline.default_payload as ResolutionPayload) : null,
      actor: 'deadline',
      expiredOn: deadline.at,
    },
    () => new Stale(),
    NO_DEADLINE,
  );
}

/** Overdue requests one sweep looks at, at most; a backlog beyond them waits for the next run. */
export const OVERDUE_PAGE = 100;

/**
 * The safety net of lost timers (the every-minute sweep): every pending request whose next timer
 * fell due more than `graceMs` ago (its mark in gsi3, Keys.requestTimerDue) gets what that timer
 * owed it: its expiry once its deadline passed, else its latest reminder due (the earlier ones are
 * past news), which moves its mark on and, where timers wait as a chain (AWS), sets the next. One
 * Query when nothing is overdue. The most overdue first, OVERDUE_PAGE of them and for `budgetMs`
 * at most (the rest next run: each one's firing stands on its own).
 */
export async function fireOverdueTimers(
  config: InstanceConfig,
  graceMs: number,
  nowMs = Date.now(),
  budgetMs = 15_000,
): Promise<{ expired: number; reminded: number }> {
  const began = Date.now();
  const fired = { expired: 0, reminded: 0 };
  for (const loc of await Store.requestsWithTimersDueBy(nowMs - graceMs, OVERDUE_PAGE)) {
    if (Date.now() - began > budgetMs) break;
    const request = await Store.getRequest(loc);
    const owed = request ? timersOf(request).filter((t) => t.fireAtMs <= nowMs) : [];
    const timer = owed.find((t) => t.kind === 'expire') ?? owed.at(-1);
    if (!request || !timer) continue;
    const outcome = await fireOn(config, timer, loc, request, nowMs);
    if (outcome === 'expired' || outcome === 'reminded') fired[outcome]++;
  }
  if (fired.expired + fired.reminded > 0) logger.warn('overdue deadline timers fired by the sweep', fired);
  return fired;
}
