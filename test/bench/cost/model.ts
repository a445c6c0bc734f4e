/**
 * The cost model's arithmetic: AWS capacity rules applied to the operation table
 * (operations.ts), measured figures from the bench's JSON, and a workload's month priced with
 * the price table (prices.ts). Pure functions; main.ts does the reading and printing.
 */
import type { ItemRead, ItemWrite, Operation } from './operations.js';
import { ACCESS_LOG_BYTES, FIXED, SSE } from './operations.js';
import type { Prices } from './prices.js';

/** A 30-day month. */
export const MONTH_DAYS = 30;
export const MONTH_SECONDS = MONTH_DAYS * 86_400;

/**
 * Whether a transaction doubles its items' index copies too. DynamoDB documents 2 WCU per KB
 * for each item a transaction writes (prepare + commit); index maintenance follows the
 * committed write once. Set to true for the upper bound.
 */
export const TRANSACTION_DOUBLES_INDEX_WRITES = false;

const units = (kb: number, per: number) => Math.max(1, Math.ceil(kb / per - 1e-9));

/** WRU of one kind of item write: 1 per started KB, ×2 in a transaction, + every index copy. */
export function writeUnits(w: ItemWrite): number {
  const table = units(w.kb, 1) * (w.tx ? 2 : 1);
  const index = (w.indexWrites ?? 0) * units(w.indexKb ?? w.kb, 1) * (w.tx && TRANSACTION_DOUBLES_INDEX_WRITES ? 2 : 1);
  return (table + index) * (w.n ?? 1);
}

/** RRU of one kind of read: 1 per started 4 KB strongly consistent, half that (0.5 at least) eventually. */
export function readUnits(r: ItemRead): number {
  return units(r.kb, 4) * (r.consistent ? 1 : 0.5) * (r.n ?? 1);
}

export const operationWru = (op: Operation): number => op.writes.reduce((sum, w) => sum + writeUnits(w), 0);
export const operationRru = (op: Operation): number => op.reads.reduce((sum, r) => sum + readUnits(r), 0);

// ---------------------------------------------------------------------------------------
// The bench's JSON
// ---------------------------------------------------------------------------------------

interface BenchEndpoint {
  label: string;
  count: number;
  latencyMs: { mean: number };
  calls: { mean: number };
  rcu: { mean: number };
  wcu: { mean: number };
  /** The server-side split (bench with EXPOSE_USAGE_HEADERS): round trips and CPU per request. */
  server?: { trips: { mean: number }; cpuP50?: number };
}

interface BenchIdle {
  ephemeral: boolean;
  callsPerMinute: number;
  rcuPerMinute: number;
  events: number;
}

/** The parts of .bench/results.json the model reads. */
export interface BenchResults {
  meta?: { finishedAt?: string; scale?: { dispatchClaimWaitMs?: number } };
  endpoints?: BenchEndpoint[];
  sse?: { idle?: BenchIdle[] };
}

/** What the bench measured for one operation, pooled over its matching labels. */
export interface Measured {
  samples: number;
  labels: string[];
  meanMs: number;
  calls: number;
  /** DynamoDB Local's reported capacity, per request. */
  localRcu: number;
  localWcu: number;
  /** Sequential storage round trips per request (pooled mean), when the bench reported them. */
  trips?: number;
  /**
   * The server's CPU per request on this machine (ms), when reported: the labels' p50s pooled
   * (x-cpu-ms, functions/middleware/request-context.ts). An upper bound: the local runtime's
   * HTTP adapter, its in-process stream consumers and the bench's own client share the process.
   */
  cpuMs?: number;
}

export interface Bench {
  endpoints: BenchEndpoint[];
  sseIdle?: BenchIdle;
  claimWaitMs?: number;
}

/** Pools several bench result files (e.g. BENCH_ONLY runs of different parts); later files win per label. */
export function poolBench(results: readonly BenchResults[]): Bench {
  const byLabel = new Map<string, BenchEndpoint>();
  let sseIdle: BenchIdle | undefined;
  let claimWaitMs: number | undefined;
  for (const r of results) {
    for (const e of r.endpoints ?? []) byLabel.set(e.label, e);
    sseIdle = r.sse?.idle?.find((i) => i.ephemeral) ?? r.sse?.idle?.[0] ?? sseIdle;
    if (r.endpoints?.some((e) => /204 after waiting/.test(e.label))) claimWaitMs = r.meta?.scale?.dispatchClaimWaitMs;
  }
  return { endpoints: [...byLabel.values()], ...(sseIdle ? { sseIdle } : {}), ...(claimWaitMs ? { claimWaitMs } : {}) };
}

export function measuredFor(op: Operation, bench: Bench): Measured | undefined {
  if (!op.bench) return undefined;
  const matching = bench.endpoints.filter((e) => op.bench!.test(e.label) && e.count > 0);
  const samples = matching.reduce((n, e) => n + e.count, 0);
  if (samples === 0) return undefined;
  const mean = (f: (e: BenchEndpoint) => number) => matching.reduce((s, e) => s + f(e) * e.count, 0) / samples;
  const split = matching.filter((e) => e.server);
  const splitSamples = split.reduce((n, e) => n + e.count, 0);
  const cpu = split.filter((e) => e.server!.cpuP50 !== undefined);
  const cpuSamples = cpu.reduce((n, e) => n + e.count, 0);
  return {
    samples,
    labels: matching.map((e) => e.label),
    meanMs: mean((e) => e.latencyMs.mean),
    calls: mean((e) => e.calls.mean),
    localRcu: mean((e) => e.rcu.mean),
    localWcu: mean((e) => e.wcu.mean),
    ...(splitSamples > 0
      ? { trips: split.reduce((s, e) => s + e.server!.trips.mean * e.count, 0) / splitSamples }
      : {}),
    ...(cpuSamples > 0 ? { cpuMs: cpu.reduce((sum, e) => sum + e.server!.cpuP50! * e.count, 0) / cpuSamples } : {}),
  };
}

/**
 * AWS's side of one sequential storage round trip from Lambda (DynamoDB or SQS in the same
 * region: single-digit milliseconds; a transaction takes about twice a single write). The
 * bench's own round trips to DynamoDB Local on this machine are no measure of it.
 */
export const AWS_ROUND_TRIP_MS = 8;

/** Lambda gives a function one full vCPU at 1,769 MB and a proportional share below. */
export const FULL_VCPU_MB = 1769;

/** How much longer CPU work takes at `memoryMb` than on one full core (this machine's, roughly). */
export const cpuSlowdown = (memoryMb: number): number => Math.max(1, FULL_VCPU_MB / memoryMb);

/**
 * Billed Lambda duration of one invocation (Lambda rounds up to the millisecond):
 * - measured with its server-side split: its sequential round trips × AWS_ROUND_TRIP_MS (the
 *   function waits) + its CPU per request as measured here, stretched by the share of a vCPU
 *   its memory buys (cpuSlowdown): lower memory costs less per millisecond and takes longer
 *   only for the CPU part;
 * - measured without it (an older bench): the bench's mean latency;
 * - not measured: the table's figure.
 * An empty claim is the table's wait plus whatever the bench measured above its own wait.
 */
export function billedMs(op: Operation, bench: Bench): number {
  const m = measuredFor(op, bench);
  if (!m) return op.durationMs;
  if (op.id === 'claim.empty' && bench.claimWaitMs) return op.durationMs + Math.max(0, m.meanMs - bench.claimWaitMs);
  if (m.trips !== undefined && m.cpuMs !== undefined) {
    return Math.ceil(m.trips * AWS_ROUND_TRIP_MS + m.cpuMs * cpuSlowdown(op.memoryMb));
  }
  return Math.ceil(m.meanMs);
}

// ---------------------------------------------------------------------------------------
// Workloads and the month's lines
// ---------------------------------------------------------------------------------------

export interface Workload {
  name: string;
  description: string;
  /** Operations per day, by operation id. */
  perDay: Record<string, number>;
  /** Claim pumps connected all month (each a loop of `claim.empty` with a pause after each). */
  claimPumps: number;
  /** Pause after an empty claim (OpenClaw: 50 ms). */
  pumpPauseMs: number;
  /** SSE connection-hours per day (a closed tab's stream runs on to its lifetime's end). */
  sseHoursPerDay: number;
  /**
   * Bursts of events per day, each seen by every open connection and followed by a warm window
   * of faster polling (core/event-stream.ts warmMs); an upper bound is the persisted events.
   */
  sseEventBurstsPerDay?: number;
  /** Whether the deployment exists at all (sweepers, queue pollers, alarms, stored-secret reads). */
  deployed: boolean;
  /** Deployed with `-c withoutAlarms=true` (lib/stack.ts): no alarm metrics. @default false */
  withoutAlarms?: boolean;
}

export interface CostLine {
  service: string;
  what: string;
  quantity: number;
  unit: string;
  unitPrice: number;
  dollars: number;
}

/** Adds up lines with the same service and what. */
class Lines {
  private readonly lines = new Map<string, CostLine>();
  add(service: string, what: string, quantity: number, unit: string, unitPrice: number): void {
    if (quantity <= 0) return;
    const key = `${service}\u0000${what}\u0000${unit}`;
    const line = this.lines.get(key) ?? { service, what, quantity: 0, unit, unitPrice, dollars: 0 };
    line.quantity += quantity;
    line.dollars = line.quantity * unitPrice;
    this.lines.set(key, line);
  }
  all(): CostLine[] {
    return [...this.lines.values()].sort((a, b) => b.dollars - a.dollars);
  }
}

/** How many empty claims one pump makes in a month. */
export function pumpCycles(op: Operation, bench: Bench, pauseMs: number): number {
  return (MONTH_SECONDS * 1000) / (billedMs(op, bench) + pauseMs);
}

/** Per-minute DynamoDB reads of one idle SSE connection, in AWS terms. */
export function sseRruPerMinute(bench: Bench): { calls: number; rru: number; localRcu?: number } {
  const calls = bench.sseIdle?.callsPerMinute ?? SSE.idleCallsPerMinute;
  const strong = Math.min(calls, SSE.strongCallsPerMinute);
  // Each poll returns nothing: the minimum, 0.5 RRU per eventually consistent Query, 1 per strong GetItem.
  return {
    calls,
    rru: strong + (calls - strong) * 0.5,
    ...(bench.sseIdle ? { localRcu: bench.sseIdle.rcuPerMinute } : {}),
  };
}

/** The month of `w`: one line per cost item, most expensive first. */
export function monthLines(w: Workload, ops: readonly Operation[], bench: Bench, p: Prices): CostLine[] {
  const lines = new Lines();
  const gbS = (mb: number, ms: number) => (mb / 1024) * (ms / 1000);
  /** Per function: how often it reads its stored secrets (cold or cache expired), and how many items each time. */
  const secretReads = new Map<string, { reads: number; items: number }>();

  const charge = (op: Operation, count: number, group: string, warmInstances = 1) => {
    if (count <= 0) return;
    const ms = billedMs(op, bench);
    lines.add(
      'Lambda',
      `duration: ${group} (${op.memoryMb} MB)`,
      count * gbS(op.memoryMb, ms),
      'GB-s',
      p.lambda.gbSecondArm,
    );
    lines.add('Lambda', `invocations: ${group}`, count, 'requests', p.lambda.request);
    if (op.http) {
      lines.add('API Gateway', `HTTP API requests: ${group}`, count, 'requests', p.apiGateway.httpRequest);
      lines.add('CloudFront', `HTTPS requests: ${group}`, count, 'requests', p.cloudFront.httpsRequest);
      lines.add(
        'CloudWatch',
        'Logs ingestion: API access logs (Infrequent Access)',
        (count * ACCESS_LOG_BYTES[op.http]) / 1024 ** 3,
        'GB',
        p.cloudWatch.logsIngestGbInfrequent,
      );
      const outKb = (op.responseKb ?? 0.3) + 0.5; // + response headers
      lines.add('CloudFront', 'data out to the internet', (count * outKb) / 1024 ** 2, 'GB', p.cloudFront.dataOutGb);
      lines.add(
        'CloudFront',
        'data to origin',
        (count * ((op.requestKb ?? 0) + 0.7)) / 1024 ** 2,
        'GB',
        p.cloudFront.dataToOriginGb,
      );
    }
    lines.add('DynamoDB', `write units: ${group}`, count * operationWru(op), 'WRU', p.dynamodb.wru);
    lines.add('DynamoDB', `read units: ${group}`, count * operationRru(op), 'RRU', p.dynamodb.rru);
    lines.add('SQS', `standard requests: ${group}`, count * (op.sqsStandard ?? 0), 'requests', p.sqs.standardRequest);
    lines.add('SQS', `FIFO requests: ${group}`, count * (op.sqsFifo ?? 0), 'requests', p.sqs.fifoRequest);
    lines.add('S3', `PUT requests: ${group}`, count * (op.s3Put ?? 0), 'requests', p.s3.put);
    lines.add('S3', `GET requests: ${group}`, count * (op.s3Get ?? 0), 'requests', p.s3.get);
    lines.add(
      'Step Functions',
      `Standard transitions: ${group}`,
      count * (op.sfnTransitions ?? 0),
      'transitions',
      p.stepFunctions.standardTransition,
    );
    lines.add('X-Ray', `traces: ${group}`, count * (op.xrayTraces ?? 0), 'traces', p.xray.traceRecorded);
    lines.add('CloudWatch', 'Logs ingestion', (count * op.logBytes) / 1024 ** 3, 'GB', p.cloudWatch.logsIngestGb);
    if (op.stores) {
      const days = Math.min(op.stores.days ?? MONTH_DAYS, MONTH_DAYS);
      // at the month's end: what the month kept (TTL'd items: their last `days` days)
      const kept = (count / MONTH_DAYS) * days * op.stores.kb;
      lines.add(
        'DynamoDB',
        'storage (end of the first month)',
        kept / 1024 ** 2,
        'GB-month',
        p.dynamodb.storageGbMonth,
      );
      lines.add(
        'DynamoDB',
        'point-in-time recovery (of the stored size)',
        kept / 1024 ** 2,
        'GB-month',
        p.dynamodb.pitrGbMonth,
      );
    }
    // HTTP functions check the instance secret, the writing ones the origin-verify value too: a warm
    // instance reads its stored secrets (one BatchGetItem) once per cache life, sparse invocations each
    // read them (one function per route).
    if (op.http) {
      const cap = (MONTH_SECONDS / FIXED.secretMaxAgeSeconds) * warmInstances;
      const items = op.writes.length > 0 ? 2 : 1;
      const fn = op.functionOf ?? op.id;
      secretReads.set(fn, { reads: Math.min(cap, (secretReads.get(fn)?.reads ?? 0) + count), items });
    }
  };

  const byId = new Map(ops.map((op) => [op.id, op]));
  for (const [id, perDay] of Object.entries(w.perDay)) {
    const op = byId.get(id);
    if (!op) throw new Error(`workload ${w.name}: no operation "${id}"`);
    charge(op, perDay * MONTH_DAYS, op.group);
  }

  const empty = byId.get('claim.empty');
  if (empty && w.claimPumps > 0) {
    charge(empty, w.claimPumps * pumpCycles(empty, bench, w.pumpPauseMs), 'claim pump', w.claimPumps);
  }

  if (w.sseHoursPerDay > 0) {
    const minutes = w.sseHoursPerDay * 60 * MONTH_DAYS;
    // A quiet connection is released (and reconnects) every idleReleaseMin, a busy one every
    // lifetimeMin: counted at the quieter rate, the higher one.
    const connections = minutes / Math.min(SSE.idleReleaseMin, SSE.lifetimeMin);
    const group = 'SSE connections';
    lines.add(
      'Lambda',
      `duration: ${group} (${SSE.memoryMb} MB)`,
      minutes * 60 * (SSE.memoryMb / 1024),
      'GB-s',
      p.lambda.gbSecondArm,
    );
    lines.add('Lambda', `invocations: ${group}`, connections, 'requests', p.lambda.request);
    lines.add('CloudFront', `HTTPS requests: ${group}`, connections, 'requests', p.cloudFront.httpsRequest);
    lines.add(
      'CloudFront',
      'data out to the internet',
      (minutes * SSE.keepaliveKbPerMinute) / 1024 ** 2,
      'GB',
      p.cloudFront.dataOutGb,
    );
    lines.add(
      'DynamoDB',
      `read units: ${group} (idle polling)`,
      minutes * sseRruPerMinute(bench).rru,
      'RRU',
      p.dynamodb.rru,
    );
    lines.add('DynamoDB', `read units: ${group} (reconnects)`, connections * SSE.reconnectRru, 'RRU', p.dynamodb.rru);
    if (w.sseEventBurstsPerDay) {
      // Each open connection (sseHoursPerDay / 24 on average) polls faster after each burst; at
      // most all the time (windows back to back).
      const perConnectionDay = Math.min(w.sseEventBurstsPerDay, (24 * 3600) / SSE.warmSeconds);
      const windows = perConnectionDay * MONTH_DAYS * (w.sseHoursPerDay / 24);
      lines.add(
        'DynamoDB',
        `read units: ${group} (warm polling after events)`,
        windows * SSE.warmRruPerBurst,
        'RRU',
        p.dynamodb.rru,
      );
    }
    lines.add(
      'CloudWatch',
      'Logs ingestion',
      (connections * SSE.logBytesPerConnection) / 1024 ** 3,
      'GB',
      p.cloudWatch.logsIngestGb,
    );
    // The instance secret and the origin-verify value.
    secretReads.set(group, { reads: Math.min(MONTH_SECONDS / FIXED.secretMaxAgeSeconds, connections * 3), items: 2 });
  }

  if (w.deployed) {
    for (const id of ['sweep.dispatch', 'sweep.tags']) {
      const op = byId.get(id);
      if (op) charge(op, MONTH_DAYS * 1440, 'sweepers (every minute)');
    }
    const polls = (FIXED.flushPollers * MONTH_SECONDS) / FIXED.pollWaitSeconds;
    // The one SQS event source mapping: the stream checks ride on the flush queue.
    lines.add(
      'SQS',
      'standard requests: flush queue (+ stream checks) long-polls',
      polls,
      'requests',
      p.sqs.standardRequest,
    );
    if (!w.withoutAlarms)
      lines.add('CloudWatch', 'alarm metrics', FIXED.alarms, 'alarm-months', p.cloudWatch.alarmMonth);
    // The secrets are table items (lib/constructs/stored-secrets.ts): nothing at rest beyond their
    // few hundred bytes of storage, 1 RRU per item per strongly consistent read.
    const rru = [...secretReads.values()].reduce((sum, r) => sum + r.reads * r.items * FIXED.secretItemRru, 0);
    lines.add('DynamoDB', 'read units: stored secrets (cold or >300 s old cache)', rru, 'RRU', p.dynamodb.rru);
  }
  return lines.all();
}

export const total = (lines: readonly CostLine[]): number => lines.reduce((s, l) => s + l.dollars, 0);
