/**
 * The floor of a month (test/bench/cost/floor.ts): what CONTRACT.md and ARCHITECTURE.md force on
 * any implementation, priced by hand on a small fixture, and never above the modelled month.
 */
import { floorLines } from '../bench/cost/floor.js';
import { monthLines, poolBench, total } from '../bench/cost/model.js';
import type { Workload } from '../bench/cost/model.js';
import { OPERATIONS } from '../bench/cost/operations.js';
import type { Operation } from '../bench/cost/operations.js';
import { PRICES } from '../bench/cost/prices.js';
import { WORKLOADS } from '../bench/cost/workloads.js';

const op = (id: string, http: Operation['http']): Operation => ({
  id,
  what: id,
  group: 'messages',
  http,
  memoryMb: 1024,
  durationMs: 50,
  calls: 1,
  writes: [{ item: 'item', kb: 1 }],
  reads: [],
  logBytes: 0,
});
const ops = [op('message.chunk', 'agent'), op('message.create.user', 'browser'), op('fixture.job', false)];

const workload: Workload = {
  name: 'fixture',
  description: 'chunks, user messages, a job; one pump; one connection all day',
  perDay: { 'message.chunk': 1000, 'message.create.user': 10, 'fixture.job': 100 },
  claimPumps: 1,
  pumpPauseMs: 50,
  sseHoursPerDay: 24,
  deployed: true,
};

const dollarsOf = (lines: ReturnType<typeof floorLines>, service: string, what: string) =>
  lines.find((l) => l.service === service && l.what.startsWith(what))?.dollars;

describe('the floor of a month', () => {
  it('prices the forced requests, held seconds, writes, reads and queue polls by hand', () => {
    const lines = floorLines(workload, ops, PRICES);
    // HTTP: 30,000 chunks + 300 user messages (the job is no request); the pump holds each
    // 10 s claim and pauses 50 ms: 2,592,000 s × 10/10.05 = 2,579,104.48 s held, 257,910.45 claims.
    const pumpHeld = (2_592_000 * 10_000) / 10_050;
    const requests = 30_300 + pumpHeld / 10;
    expect(dollarsOf(lines, 'CloudFront', 'HTTPS requests')).toBeCloseTo(requests * 1e-6, 9);
    expect(dollarsOf(lines, 'API Gateway', 'HTTP API requests')).toBeCloseTo(requests * 1e-6, 9);
    expect(dollarsOf(lines, 'Lambda', 'invocations')).toBeCloseTo(requests * 0.2e-6, 9);
    // held at 128 MB: GB-s × $0.0000133334
    expect(dollarsOf(lines, 'Lambda', 'claim pumps held')).toBeCloseTo(pumpHeld * 0.125 * 0.0000133334, 9);
    expect(dollarsOf(lines, 'Lambda', 'SSE connections held')).toBeCloseTo(2_592_000 * 0.125 * 0.0000133334, 9);
    // 30,000 chunks × 2 WRU + 300 messages × 4 WRU = 61,200 WRU × $0.625/M
    expect(dollarsOf(lines, 'DynamoDB', 'write units')).toBeCloseTo(61_200 * 0.625e-6, 9);
    // one read of nothing a second: 2,592,000 × 0.5 RRU × $0.125/M
    expect(dollarsOf(lines, 'DynamoDB', 'read units')).toBeCloseTo(1_296_000 * 0.125e-6, 9);
    // 5 pollers × 2,592,000 s / 20 s = 648,000 receives × $0.40/M
    expect(dollarsOf(lines, 'SQS', 'standard requests')).toBeCloseTo(0.2592, 9);
    expect(lines).toHaveLength(8);
    expect(total(lines)).toBeCloseTo(
      requests * 2.2e-6 + (pumpHeld + 2_592_000) * 0.125 * 0.0000133334 + 61_200 * 0.625e-6 + 0.162 + 0.2592,
      9,
    );
  });

  it("counts a completed reply's final text in its transaction: 2 × 5 KB for the message, 2 for the event", () => {
    const complete = { ...op('message.complete', 'agent'), writes: [{ item: 'item', kb: 5 }] };
    const lines = floorLines(
      { ...workload, perDay: { 'message.complete': 100 }, claimPumps: 0, sseHoursPerDay: 0, deployed: false },
      [complete],
      PRICES,
    );
    // 3,000 completes a month × 12 WRU × $0.625/M
    expect(dollarsOf(lines, 'DynamoDB', 'write units')).toBeCloseTo(3_000 * 12 * 0.625e-6, 9);
  });

  it('is the queue polls alone for a deployment nobody uses, and nothing for one not deployed', () => {
    const idle: Workload = { ...workload, perDay: {}, claimPumps: 0, sseHoursPerDay: 0 };
    const lines = floorLines(idle, ops, PRICES);
    expect(lines.map((l) => l.service)).toEqual(['SQS']);
    expect(total(lines)).toBeCloseTo(0.2592, 9);
    expect(floorLines({ ...idle, deployed: false }, ops, PRICES)).toEqual([]);
  });

  it('refuses a workload that names an operation the table lacks', () => {
    expect(() => floorLines({ ...workload, perDay: { 'no.such': 1 } }, ops, PRICES)).toThrow(/no operation "no.such"/);
  });

  it('stays under the modelled month of every named workload (a floor above the bill would be wrong)', () => {
    for (const w of WORKLOADS) {
      const floor = total(floorLines(w, OPERATIONS, PRICES));
      expect(floor).toBeGreaterThan(0);
      expect(floor).toBeLessThanOrEqual(total(monthLines(w, OPERATIONS, poolBench([]), PRICES)));
    }
  });
});
