/**
 * A tab's cost (issue 27 item 8): what one browser tab of the web app adds to the month through
 * its event stream, priced by the model's own SSE lines (model.ts `monthLines`: Lambda GB-s at the
 * SSE function's memory, reconnects at the stream's idle release and lifetime, idle and warm
 * DynamoDB polling, keepalive bytes, logs, stored-secret reads) as the difference between a
 * deployment with the tab and the same deployment without it. No price of its own.
 *
 * The policy (web/src/live/events.ts): a tab hidden for HIDDEN_RELEASE_MIN closes its stream, and
 * reconnects with its cursor when shown. The function behind a closed stream runs on for its tail
 * (workloads.ts STREAM_TAIL_MIN). Without the policy a tab left open holds its stream all day.
 */
import type { Bench, Workload } from './model.js';
import { MONTH_DAYS, monthLines, total } from './model.js';
import type { Operation } from './operations.js';
import type { Prices } from './prices.js';
import { STREAM_TAIL_MIN } from './workloads.js';

/** web/src/live/events.ts HIDDEN_RELEASE_MS, in minutes. */
export const HIDDEN_RELEASE_MIN = 2;

/** A tab's day: hours visible, hours hidden, and in how many stretches it was hidden. */
export interface TabDay {
  visibleHours: number;
  hiddenHours: number;
  hides: number;
}

/** Open all day: 8 h in use, then hidden (another tab, a locked screen) for 16 h in one stretch. */
export const TAB_ALL_DAY: TabDay = { visibleHours: 8, hiddenHours: 16, hides: 1 };

/** Stream connection-hours of the tab's day, with or without the hidden-tab policy. */
export function tabStreamHours(day: TabDay, policy: boolean): number {
  if (!policy || day.hides === 0) return day.visibleHours + day.hiddenHours;
  // Each stretch hidden: held up to the release, then the function's tail (never past the stretch).
  const stretchMin = (day.hiddenHours * 60) / day.hides;
  const heldMin = Math.min(stretchMin, HIDDEN_RELEASE_MIN + STREAM_TAIL_MIN);
  return day.visibleHours + (day.hides * heldMin) / 60;
}

export interface TabCost {
  streamHoursPerDay: number;
  perDay: number;
  perMonth: number;
}

/**
 * The tab's share of `base`'s month (its stream added to base's SSE connection-hours; event
 * bursts as base has them), per day and per month.
 */
export function tabCost(
  day: TabDay,
  policy: boolean,
  base: Workload,
  ops: readonly Operation[],
  bench: Bench,
  prices: Prices,
): TabCost {
  const streamHoursPerDay = tabStreamHours(day, policy);
  const without = total(monthLines(base, ops, bench, prices));
  const withTab = total(
    monthLines({ ...base, sseHoursPerDay: base.sseHoursPerDay + streamHoursPerDay }, ops, bench, prices),
  );
  const perMonth = withTab - without;
  return { streamHoursPerDay, perDay: perMonth / MONTH_DAYS, perMonth };
}
