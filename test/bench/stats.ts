/**
 * Benchmark arithmetic: one sample per HTTP request, percentiles, per-endpoint summaries,
 * a first-versus-last trend per endpoint, and the plain-text table the runner prints.
 */

/** One HTTP request as the benchmark saw it. */
export interface Sample {
  /** Endpoint label: method + route template, plus a variant suffix (e.g. `?tag`). */
  label: string;
  status: number;
  /** Whether the status was the expected one. */
  ok: boolean;
  /** Client-side latency: performance.now() around fetch, body read included. */
  ms: number;
  /** From the x-ddb-* response headers (0 when a header is missing). */
  calls: number;
  rcu: number;
  wcu: number;
  /**
   * From the x-storage-* / x-server-ms headers (undefined when missing): time inside DynamoDB
   * and SQS calls (overlapping calls once), sequential storage round trips, and the time the
   * server's middleware chain took around them.
   */
  storageMs?: number;
  trips?: number;
  serverMs?: number;
  /**
   * From x-cpu-ms: the server process's CPU time during the request (the request's own only
   * when nothing else ran: read it from sequential runs).
   */
  cpuMs?: number;
  /** Response body size in bytes. */
  bytes: number;
}

export interface Stat {
  mean: number;
  max: number;
}

export interface Summary {
  label: string;
  count: number;
  /** Responses whose status was not the expected one. */
  errors: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number; mean: number };
  calls: Stat;
  rcu: Stat;
  wcu: Stat;
  /**
   * Server-side split, over the samples that carried the headers: p50 of the time inside
   * storage calls, p50 of the server's total, p50 of each request's overhead (server total
   * minus storage time), and the mean sequential storage round trips. Absent without headers.
   */
  server?: {
    storageP50: number;
    totalP50: number;
    overheadP50: number;
    overheadP95: number;
    trips: Stat;
    /** p50 of the server process's CPU per request (x-cpu-ms), when reported. */
    cpuP50?: number;
  };
}

/** The p-th percentile (0..100) of ascending `sorted`, linearly interpolated between ranks. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower] ?? Number.NaN;
  const high = sorted[upper] ?? low;
  return low + (high - low) * (rank - lower);
}

function stat(values: readonly number[]): Stat {
  if (values.length === 0) return { mean: 0, max: 0 };
  let sum = 0;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v > max) max = v;
  }
  return { mean: sum / values.length, max };
}

export function summarize(label: string, samples: readonly Sample[]): Summary {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    label,
    count: samples.length,
    errors: samples.filter((s) => !s.ok).length,
    latencyMs: {
      p50: percentile(ms, 50),
      p95: percentile(ms, 95),
      p99: percentile(ms, 99),
      max: ms.at(-1) ?? Number.NaN,
      mean: stat(ms).mean,
    },
    calls: stat(samples.map((s) => s.calls)),
    rcu: stat(samples.map((s) => s.rcu)),
    wcu: stat(samples.map((s) => s.wcu)),
    ...serverSplit(samples),
  };
}

function serverSplit(samples: readonly Sample[]): Pick<Summary, 'server'> {
  const timed = samples.filter((s) => s.storageMs !== undefined && s.serverMs !== undefined);
  if (timed.length === 0) return {};
  const sorted = (values: number[]) => values.sort((a, b) => a - b);
  const overhead = sorted(timed.map((s) => s.serverMs! - s.storageMs!));
  return {
    server: {
      storageP50: percentile(sorted(timed.map((s) => s.storageMs!)), 50),
      totalP50: percentile(sorted(timed.map((s) => s.serverMs!)), 50),
      overheadP50: percentile(overhead, 50),
      overheadP95: percentile(overhead, 95),
      trips: stat(timed.map((s) => s.trips ?? 0)),
      ...(timed.every((s) => s.cpuMs !== undefined)
        ? { cpuP50: percentile(sorted(timed.map((s) => s.cpuMs!)), 50) }
        : {}),
    },
  };
}

/** Samples grouped by label, in the order each label first appeared. */
export function groupByLabel(samples: readonly Sample[]): Map<string, Sample[]> {
  const groups = new Map<string, Sample[]>();
  for (const s of samples) {
    const group = groups.get(s.label);
    if (group) group.push(s);
    else groups.set(s.label, [s]);
  }
  return groups;
}

export interface Trend {
  label: string;
  /** Size of each compared slice (the first and the last tenth, at least 5 samples). */
  slice: number;
  first: { ms: number; calls: number; capacity: number };
  last: { ms: number; calls: number; capacity: number };
}

/**
 * First tenth versus last tenth of an endpoint's samples, in request order: shows whether an
 * endpoint gets slower or costlier as the table fills (or as a list walk goes deeper).
 * Capacity is RCU + WCU. Only for endpoints with at least 20 samples.
 */
export function trend(label: string, samples: readonly Sample[]): Trend | undefined {
  if (samples.length < 20) return undefined;
  const slice = Math.max(5, Math.floor(samples.length / 10));
  const means = (part: readonly Sample[]) => ({
    ms: stat(part.map((s) => s.ms)).mean,
    calls: stat(part.map((s) => s.calls)).mean,
    capacity: stat(part.map((s) => s.rcu + s.wcu)).mean,
  });
  return { label, slice, first: means(samples.slice(0, slice)), last: means(samples.slice(-slice)) };
}

/** A fixed-width text table: the first column left-aligned, the others right-aligned. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** The columns of `summaryCells`: count, errors and latency percentiles. */
export const SUMMARY_HEADER = ['count', 'err', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'];

/** A summary's count, errors and latency percentiles (p50, p95, p99, max), as table cells. */
export const summaryCells = (s: Summary): string[] => [
  String(s.count),
  String(s.errors),
  f1(s.latencyMs.p50),
  f1(s.latencyMs.p95),
  f1(s.latencyMs.p99),
  f1(s.latencyMs.max),
];

export function summaryTable(summaries: readonly Summary[]): string {
  const header = ['endpoint', ...SUMMARY_HEADER, 'calls', 'max', 'RCU', 'max', 'WCU', 'max', 'trips'];
  const rows = summaries.map((s) => [
    s.label,
    ...summaryCells(s),
    f2(s.calls.mean),
    String(s.calls.max),
    f2(s.rcu.mean),
    f2(s.rcu.max),
    f2(s.wcu.mean),
    f2(s.wcu.max),
    s.server ? f2(s.server.trips.mean) : '-',
  ]);
  return textTable(header, rows);
}

/**
 * Per endpoint, where the server's time goes: p50 inside storage calls (DynamoDB + SQS, the
 * floor on AWS is ~5-10 ms per round trip), p50 of the server's total, and p50/p95 of the
 * overhead above storage (the goal is <= 1.5 ms p50), and p50 of the CPU per request (x-cpu-ms,
 * which the cost model stretches by Lambda memory). Client-side latency adds the HTTP hop.
 */
export function serverTable(summaries: readonly Summary[]): string {
  const header = ['endpoint', 'trips', 'storage p50', 'server p50', 'overhead p50', 'overhead p95', 'CPU p50'];
  const rows = summaries
    .filter((s) => s.server)
    .map((s) => [
      s.label,
      f2(s.server!.trips.mean),
      f2(s.server!.storageP50),
      f2(s.server!.totalP50),
      f2(s.server!.overheadP50),
      f2(s.server!.overheadP95),
      s.server!.cpuP50 === undefined ? '-' : f2(s.server!.cpuP50),
    ]);
  return textTable(header, rows);
}

export function trendTable(trends: readonly Trend[]): string {
  const measures = ['ms', 'calls', 'CU'].flatMap((m) => [`${m} first`, `${m} last`]);
  const header = ['endpoint (first vs last tenth)', 'n', ...measures];
  const rows = trends.map((t) => {
    const firstLast = (format: (n: number) => string, key: keyof Trend['first']) => [
      format(t.first[key]),
      format(t.last[key]),
    ];
    return [t.label, String(t.slice), ...firstLast(f1, 'ms'), ...firstLast(f2, 'calls'), ...firstLast(f2, 'capacity')];
  });
  return textTable(header, rows);
}
