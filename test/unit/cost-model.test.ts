/**
 * The cost model's arithmetic (test/bench/cost/model.ts) on a small fixture: AWS capacity
 * rules per item, and one operation's month priced by hand.
 */
import {
  AWS_ROUND_TRIP_MS,
  MONTH_DAYS,
  billedMs,
  cpuSlowdown,
  measuredFor,
  monthLines,
  poolBench,
  readUnits,
  total,
  writeUnits,
} from '../bench/cost/model.js';
import type { Workload } from '../bench/cost/model.js';
import { FIXED, SSE } from '../bench/cost/operations.js';
import type { Operation } from '../bench/cost/operations.js';
import { PRICES } from '../bench/cost/prices.js';

describe('capacity rules', () => {
  it('bills 1 WRU per started KB, doubles transactional table writes, and adds every index copy once', () => {
    expect(writeUnits({ item: 'small', kb: 0.1 })).toBe(1);
    expect(writeUnits({ item: 'exactly 1 KB', kb: 1 })).toBe(1);
    expect(writeUnits({ item: '1.5 KB', kb: 1.5 })).toBe(2);
    // 1 KB (table) × 2 (transaction) + 4 index writes (two keys moved) of 1 KB
    expect(writeUnits({ item: 'chat', kb: 1, tx: true, indexWrites: 4 })).toBe(6);
    // INCLUDE copies are priced at their own size; n items
    expect(writeUnits({ item: 'state', kb: 0.4, indexWrites: 2, indexKb: 0.2, n: 3 })).toBe(9);
  });

  it('bills 1 RRU per started 4 KB strongly consistent, half (0.5 at least) eventually consistent', () => {
    expect(readUnits({ item: 'get', kb: 0.1, consistent: true })).toBe(1);
    expect(readUnits({ item: 'query', kb: 0.1, consistent: false })).toBe(0.5);
    expect(readUnits({ item: 'query', kb: 9, consistent: true })).toBe(3);
    expect(readUnits({ item: 'query', kb: 9, consistent: false, n: 2 })).toBe(3);
  });
});

describe('a month of one operation', () => {
  const op: Operation = {
    id: 'fixture.op',
    what: 'fixture',
    group: 'messages',
    bench: /^POST \/fixture$/,
    http: false,
    memoryMb: 512,
    durationMs: 100,
    calls: 2,
    // ceil(1.5) = 2 KB × 2 (transaction) + 2 index writes × 2 KB = 8 WRU
    writes: [{ item: 'item', kb: 1.5, tx: true, indexWrites: 2 }],
    // ceil(5 / 4) = 2 × 0.5 = 1 RRU
    reads: [{ item: 'query', kb: 5, consistent: false }],
    sqsStandard: 1,
    logBytes: 0,
  };
  const workload: Workload = {
    name: 'fixture',
    description: '1,000 a day',
    perDay: { 'fixture.op': 1000 },
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: false,
  };

  it('prices it by hand', () => {
    const lines = monthLines(workload, [op], poolBench([]), PRICES);
    const count = 1000 * MONTH_DAYS; // 30,000
    expect(count).toBe(30_000);
    const dollars = (service: string, what: string) =>
      lines.find((l) => l.service === service && l.what === what)?.dollars;
    // 30,000 × 0.5 GB × 0.1 s = 1,500 GB-s × $0.0000133334 = $0.0200001
    expect(dollars('Lambda', 'duration: messages (512 MB)')).toBeCloseTo(0.0200001, 9);
    // 30,000 × $0.20/M = $0.006
    expect(dollars('Lambda', 'invocations: messages')).toBeCloseTo(0.006, 9);
    // 30,000 × 8 = 240,000 WRU × $0.625/M = $0.15
    expect(dollars('DynamoDB', 'write units: messages')).toBeCloseTo(0.15, 9);
    // 30,000 × 1 = 30,000 RRU × $0.125/M = $0.00375
    expect(dollars('DynamoDB', 'read units: messages')).toBeCloseTo(0.00375, 9);
    // 30,000 × $0.40/M = $0.012
    expect(dollars('SQS', 'standard requests: messages')).toBeCloseTo(0.012, 9);
    // nothing else: not HTTP, no logs, not deployed (no sweepers, alarms, secret)
    expect(lines).toHaveLength(5);
    // 0.0200001 + 0.006 + 0.15 + 0.00375 + 0.012
    expect(total(lines)).toBeCloseTo(0.1917501, 9);
  });

  it("prices an HTTP request at API Gateway, CloudFront and its access log line (Infrequent Access), the line by its sender's user agent", () => {
    const priced = (http: 'agent' | 'browser') => {
      const lines = monthLines(workload, [{ ...op, http }], poolBench([]), PRICES);
      return (service: string, what: string) => lines.find((l) => l.service === service && l.what === what)?.dollars;
    };
    const dollars = priced('browser');
    // 30,000 requests × $1/M each at API Gateway and at CloudFront
    expect(dollars('API Gateway', 'HTTP API requests: messages')).toBeCloseTo(0.03, 9);
    expect(dollars('CloudFront', 'HTTPS requests: messages')).toBeCloseTo(0.03, 9);
    // 30,000 × 380 B = 0.0106 GB × $0.25
    const accessLogs = 'Logs ingestion: API access logs (Infrequent Access)';
    expect(dollars('CloudWatch', accessLogs)).toBeCloseTo(((30_000 * 380) / 1024 ** 3) * 0.25, 9);
    // An agent's line is shorter (a Node client's user agent): 30,000 × 280 B.
    expect(priced('agent')('CloudWatch', accessLogs)).toBeCloseTo(((30_000 * 280) / 1024 ** 3) * 0.25, 9);
    expect(priced('agent')('API Gateway', 'HTTP API requests: messages')).toBeCloseTo(0.03, 9);
  });

  it('prices what an operation keeps: storage and its point-in-time recovery, per GB-month at the month end', () => {
    // 1 KB a day for 30 days, or 10 days of it for an item with a 10-day TTL
    const kept = (days?: number) =>
      monthLines(workload, [{ ...op, stores: { kb: 1, ...(days ? { days } : {}) } }], poolBench([]), PRICES);
    const dollars = (lines: ReturnType<typeof monthLines>, what: string) =>
      lines.find((l) => l.service === 'DynamoDB' && l.what === what)?.dollars;
    // 30,000 KB = 0.0286 GB × $0.25 and × $0.20
    const gb = 30_000 / 1024 ** 2;
    expect(dollars(kept(), 'storage (end of the first month)')).toBeCloseTo(gb * 0.25, 9);
    expect(dollars(kept(), 'point-in-time recovery (of the stored size)')).toBeCloseTo(gb * 0.2, 9);
    expect(dollars(kept(10), 'point-in-time recovery (of the stored size)')).toBeCloseTo((gb / 3) * 0.2, 9);
  });

  it('bills the bench mean latency when the bench measured the operation', () => {
    const bench = poolBench([
      {
        endpoints: [
          {
            label: 'POST /fixture',
            count: 3,
            latencyMs: { mean: 200 },
            calls: { mean: 2 },
            rcu: { mean: 1 },
            wcu: { mean: 4 },
          },
          {
            label: 'GET /other',
            count: 9,
            latencyMs: { mean: 1 },
            calls: { mean: 1 },
            rcu: { mean: 1 },
            wcu: { mean: 0 },
          },
        ],
      },
    ]);
    expect(measuredFor(op, bench)).toMatchObject({ samples: 3, meanMs: 200, localWcu: 4 });
    const lines = monthLines(workload, [op], bench, PRICES);
    // 30,000 × 0.5 GB × 0.2 s = 3,000 GB-s × $0.0000133334 = $0.0400002
    expect(lines.find((l) => l.what === 'duration: messages (512 MB)')?.dollars).toBeCloseTo(0.0400002, 9);
  });
});

describe('billed duration from round trips and CPU', () => {
  const op = (memoryMb: number): Operation => ({
    id: 'fixture.write',
    what: 'fixture',
    group: 'chunks',
    bench: /^POST \/write/,
    http: false,
    memoryMb,
    durationMs: 999,
    calls: 2,
    writes: [],
    reads: [],
    logBytes: 0,
  });
  const endpoint = (label: string, count: number, trips: number, cpuP50: number) => ({
    label,
    count,
    latencyMs: { mean: 50 },
    calls: { mean: 2 },
    rcu: { mean: 0 },
    wcu: { mean: 2 },
    server: { trips: { mean: trips }, cpuP50 },
  });
  const bench = poolBench([
    {
      endpoints: [
        endpoint('POST /write (sequential)', 100, 2, 2),
        endpoint('POST /write (20 at once)', 300, 2.4, 3.333),
      ],
    },
  ]);

  it('pools round trips and CPU over the labels, and bills trips × AWS latency + CPU × the memory share', () => {
    const m = measuredFor(op(1024), bench)!;
    // (100 × 2 + 300 × 2.4) / 400 = 2.3
    expect(m.trips).toBeCloseTo(2.3, 9);
    // (100 × 2 + 300 × 3.333) / 400 = 2.99975
    expect(m.cpuMs).toBeCloseTo(2.99975, 9);
    // 2.3 × 8 = 18.4 ms waiting; ~3 ms of CPU × 1769/1024 = 5.18 → ceil(23.58) = 24
    expect(AWS_ROUND_TRIP_MS).toBe(8);
    expect(billedMs(op(1024), bench)).toBe(24);
    // 512 MB: 18.4 + 3 × 3.455 = 28.77 → 29 ms, but half the memory: 29 × 0.5 < 24 × 1 GB-ms
    expect(billedMs(op(512), bench)).toBe(29);
    // 2,048 MB: past one vCPU, no faster than a full core: 18.4 + 3 = 21.4 → 22
    expect(billedMs(op(2048), bench)).toBe(22);
    expect(cpuSlowdown(128)).toBeCloseTo(13.82, 2);
  });

  it('falls back to the mean latency without the split, and to the table without a measurement', () => {
    const old = poolBench([{ endpoints: [{ ...endpoint('POST /write', 10, 2, 3), server: undefined }] }]);
    expect(billedMs(op(1024), old)).toBe(50);
    expect(billedMs(op(1024), poolBench([]))).toBe(999);
  });
});

describe('a deployed month: the stored secrets', () => {
  const route = (id: string, writes: Operation['writes']): Operation => ({
    id,
    what: id,
    group: 'requests',
    bench: /^$/,
    http: 'agent',
    memoryMb: 128,
    durationMs: 10,
    calls: 1,
    writes,
    reads: [],
    logBytes: 0,
  });
  const read = route('fixture.read', []);
  const write = route('fixture.write', [{ item: 'item', kb: 0.5 }]);
  const workload = (perDay: number): Workload => ({
    name: 'secrets',
    description: 'two routes',
    perDay: { 'fixture.read': perDay, 'fixture.write': perDay },
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: true,
  });

  it('bills table reads (1 RRU per item) per cold start or expired cache, and no Secrets Manager at all', () => {
    const line = (perDay: number) =>
      monthLines(workload(perDay), [read, write], poolBench([]), PRICES).filter((l) =>
        l.what.includes('stored secrets'),
      );
    // Sparse: 10 requests a day each read: the read route 1 item (instance secret), the write route 2
    // (instance secret + origin-verify value): 300 × 1 + 300 × 2 = 900 RRU.
    expect(line(10)).toEqual([expect.objectContaining({ service: 'DynamoDB', unit: 'RRU', quantity: 900 })]);
    // Busy: at most one read per 300 s per warm instance: 8,640 reads a month × (1 + 2) items.
    expect(line(1e6)[0]!.quantity).toBe(8640 * 3);
    expect(line(1e6)[0]!.dollars).toBeCloseTo(8640 * 3 * PRICES.dynamodb.rru, 12);
    const all = monthLines(workload(10), [read, write], poolBench([]), PRICES);
    expect(all.filter((l) => /secrets manager/i.test(l.service))).toEqual([]);
  });
});

describe('a month of SSE connections', () => {
  it('prices held time, idle polling, reconnects at the idle-release rate and warm windows per burst', () => {
    const workload: Workload = {
      name: 'sse',
      description: 'one connection all month, 100 bursts a day',
      perDay: {},
      claimPumps: 0,
      pumpPauseMs: 50,
      sseHoursPerDay: 24,
      sseEventBurstsPerDay: 100,
      deployed: false,
    };
    const lines = monthLines(workload, [], poolBench([]), PRICES);
    const line = (what: string) => lines.find((l) => l.what === what);
    const minutes = 24 * 60 * MONTH_DAYS; // 43,200
    // 43,200 min × 60 s × 0.125 GB = 324,000 GB-s
    expect(line(`duration: SSE connections (${SSE.memoryMb} MB)`)?.quantity).toBeCloseTo(324_000, 6);
    // A quiet connection reconnects every 5 minutes: 8,640 connections, each reading ~12 RRU.
    expect(line('invocations: SSE connections')?.quantity).toBeCloseTo(minutes / SSE.idleReleaseMin, 6);
    expect(line('read units: SSE connections (reconnects)')?.quantity).toBeCloseTo(8640 * SSE.reconnectRru, 6);
    // 100 bursts a day × 30 days × 1 connection × the reads of one warm window.
    expect(line('read units: SSE connections (warm polling after events)')?.quantity).toBeCloseTo(
      3000 * SSE.warmRruPerBurst,
      6,
    );
    // More bursts than windows fit in a day: warm all the time, no more.
    const busy = monthLines({ ...workload, sseEventBurstsPerDay: 1e6 }, [], poolBench([]), PRICES);
    expect(
      busy.find((l) => l.what === 'read units: SSE connections (warm polling after events)')?.quantity,
    ).toBeCloseTo(((24 * 3600) / SSE.warmSeconds) * MONTH_DAYS * SSE.warmRruPerBurst, 6);
    // Idle polling without a bench figure: the table's calls (12 strongly consistent, the rest at 0.5 RRU).
    const idleRru = SSE.strongCallsPerMinute + (SSE.idleCallsPerMinute - SSE.strongCallsPerMinute) * 0.5;
    expect(line('read units: SSE connections (idle polling)')?.quantity).toBeCloseTo(minutes * idleRru, 6);
  });
});

describe('an idle deployed month', () => {
  const idle = (withoutAlarms = false): Workload => ({
    name: 'idle',
    description: 'deployed, no traffic',
    perDay: {},
    claimPumps: 0,
    pumpPauseMs: 50,
    sseHoursPerDay: 0,
    deployed: true,
    withoutAlarms,
  });

  it('long-polls one SQS event source (the flush queue, which carries the stream checks too), all month', () => {
    const sqs = monthLines(idle(), [], poolBench([]), PRICES).filter((l) => l.service === 'SQS');
    // 5 pollers × 2,592,000 s / 20 s = 648,000 ReceiveMessage × $0.40/M = $0.2592
    expect(FIXED).toMatchObject({ flushPollers: 5, pollWaitSeconds: 20 });
    expect(sqs.map((l) => [l.what, l.quantity])).toEqual([
      ['standard requests: flush queue (+ stream checks) long-polls', 648_000],
    ]);
    expect(sqs[0]!.dollars).toBeCloseTo(0.2592, 9);
  });

  it('bills the alarm metrics ($0.10 each) unless deployed without alarms', () => {
    const alarms = (w: Workload) =>
      monthLines(w, [], poolBench([]), PRICES).filter((l) => l.service === 'CloudWatch' && l.what === 'alarm metrics');
    expect(FIXED.alarms).toBe(11);
    expect(alarms(idle(false)).map((l) => l.dollars)).toEqual([expect.closeTo(1.1, 9)]);
    expect(alarms(idle(true))).toEqual([]);
  });
});
