/**
 * A tab's cost (test/bench/cost/tab.ts): the stream hours of a tab's day with and without the
 * hidden-tab policy, and their price as what the tab adds to a month of the model's SSE lines.
 */
import { readFileSync } from 'node:fs';
import { MONTH_DAYS, monthLines, poolBench, total } from '../bench/cost/model.js';
import type { Workload } from '../bench/cost/model.js';
import { SSE } from '../bench/cost/operations.js';
import { PRICES } from '../bench/cost/prices.js';
import { HIDDEN_RELEASE_MIN, TAB_ALL_DAY, tabCost, tabStreamHours } from '../bench/cost/tab.js';
import { STREAM_TAIL_MIN } from '../bench/cost/workloads.js';

describe('stream hours of a tab open all day', () => {
  it('holds the stream 24 h without the policy; with it, the visible hours plus release and tail per hide', () => {
    expect(TAB_ALL_DAY).toEqual({ visibleHours: 8, hiddenHours: 16, hides: 1 });
    // The app's own delay (web/src/live/events.ts), which the browser test holds to 2 minutes.
    const app = readFileSync(new URL('../../web/src/live/events.ts', import.meta.url), 'utf8');
    expect(/const HIDDEN_RELEASE_MS = (.+);/.exec(app)?.[1]).toBe(`${HIDDEN_RELEASE_MIN} * 60_000`);
    expect(STREAM_TAIL_MIN).toBe(2.5);
    expect(tabStreamHours(TAB_ALL_DAY, false)).toBe(24);
    // 8 h + (2 min held hidden + 2.5 min the function runs on) = 8 h 4.5 min
    expect(tabStreamHours(TAB_ALL_DAY, true)).toBeCloseTo(8 + 4.5 / 60, 12);
    // Hidden four times: four releases and tails.
    expect(tabStreamHours({ visibleHours: 8, hiddenHours: 16, hides: 4 }, true)).toBeCloseTo(8 + 18 / 60, 12);
  });

  it('counts a stretch hidden for less than the release and tail as connected all along', () => {
    const briefly = { visibleHours: 23.95, hiddenHours: 0.05, hides: 1 }; // hidden 3 minutes
    expect(tabStreamHours(briefly, true)).toBeCloseTo(24, 12);
    expect(tabStreamHours({ visibleHours: 24, hiddenHours: 0, hides: 0 }, true)).toBe(24);
  });
});

describe("a tab's price", () => {
  const quiet: Workload = {
    name: 'quiet',
    description: 'nothing but the tab',
    perDay: {},
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: false,
  };
  const bench = poolBench([]);

  it('is the SSE function held for the stream hours, its reconnects, polls, keepalives and logs, priced by hand', () => {
    const cost = tabCost(TAB_ALL_DAY, false, quiet, [], bench, PRICES);
    const minutes = 24 * 60 * MONTH_DAYS; // 43,200 connection-minutes
    const connections = minutes / Math.min(SSE.idleReleaseMin, SSE.lifetimeMin); // 8,640
    const idleRru = SSE.strongCallsPerMinute + (SSE.idleCallsPerMinute - SSE.strongCallsPerMinute) * 0.5;
    const byHand =
      minutes * 60 * (SSE.memoryMb / 1024) * PRICES.lambda.gbSecondArm +
      connections * (PRICES.lambda.request + PRICES.cloudFront.httpsRequest) +
      ((minutes * SSE.keepaliveKbPerMinute) / 1024 ** 2) * PRICES.cloudFront.dataOutGb +
      (minutes * idleRru + connections * SSE.reconnectRru) * PRICES.dynamodb.rru +
      ((connections * SSE.logBytesPerConnection) / 1024 ** 3) * PRICES.cloudWatch.logsIngestGb;
    expect(cost.streamHoursPerDay).toBe(24);
    expect(cost.perMonth).toBeCloseTo(byHand, 9);
    expect(cost.perDay).toBeCloseTo(byHand / MONTH_DAYS, 9);
  });

  it('with the policy costs in proportion to the stream hours it keeps (8 h 4.5 min of 24 h)', () => {
    const without = tabCost(TAB_ALL_DAY, false, quiet, [], bench, PRICES);
    const withPolicy = tabCost(TAB_ALL_DAY, true, quiet, [], bench, PRICES);
    expect(withPolicy.perMonth / without.perMonth).toBeCloseTo((8 + 4.5 / 60) / 24, 9);
    expect(withPolicy.perMonth).toBeLessThan(without.perMonth / 2.9);
  });

  it("adds to a deployment's month only what the tab brings (its events' warm polling included)", () => {
    const busy: Workload = { ...quiet, deployed: true, sseHoursPerDay: 24, sseEventBurstsPerDay: 1000 };
    const cost = tabCost(TAB_ALL_DAY, true, busy, [], bench, PRICES);
    const hours = tabStreamHours(TAB_ALL_DAY, true);
    const month = (sseHoursPerDay: number) => total(monthLines({ ...busy, sseHoursPerDay }, [], bench, PRICES));
    expect(cost.perMonth).toBeCloseTo(month(24 + hours) - month(24), 12);
    const warm = (w: Workload) =>
      monthLines(w, [], bench, PRICES).find(
        (l) => l.what === 'read units: SSE connections (warm polling after events)',
      )!.dollars;
    // The tab sees the deployment's bursts for the hours it is connected.
    expect(warm({ ...busy, sseHoursPerDay: 24 + hours }) - warm(busy)).toBeCloseTo(
      ((1000 * MONTH_DAYS * hours) / 24) * SSE.warmRruPerBurst * PRICES.dynamodb.rru,
      12,
    );
  });
});
