/**
 * BENCH_ONLY=sse: the figures behind the SSE holding policy and live delivery after idle (issue 16
 * items 2 and 7), each on second runtimes (child-server.ts, one process each) on the bench's
 * DynamoDB Local and table:
 *
 * 1. Idle cost per poll cadence: one ephemeral=true connection per server with
 *    SSE_IDLE_POLL_MS = 1000 (the default), 500 and 250 (warm window off), and one with the
 *    default timings (1000 ms, and 200 ms for 6 s after an event or the start), nothing written,
 *    until the server releases it (SSE_IDLE_RELEASE_MS = `IDLE_WINDOW_MS`); its closing `: usage`
 *    comment gives its DynamoDB calls, scaled to a minute and priced in AWS terms (0.5 RRU per
 *    eventually consistent Query that returns nothing, 1 RRU per strongly consistent GetItem).
 *    The defaults' connection minus the 1000 ms one is what one warm window costs.
 * 2. First event after `PAUSE_MS` (+ up to `JITTER_MS`) of quiet, `SAMPLES` times per setup, 1
 *    client: latency from a write's HTTP response at the bench to its chat.read event at the client.
 *    - "same process": writes and the stream on one runtime, as `npm start` runs them: the write
 *      bell (platform/write-bell.ts) ends the stream's wait at the write.
 *    - "separate processes", per cadence: writes to the bench's own server, the stream on the
 *      cadence's server with SSE_WRITE_BELL=off, as in AWS (a writer and a stream are different
 *      function instances, so only polling finds the event; the bell must be off because that
 *      server's own effect tails write in reaction to the bench's events). Localhost has no
 *      network delay: AWS adds its round trips (~5-10 ms for the read, the streaming path to
 *      the client) on top.
 *    - the same with the default timings, after 3-4 s of quiet (inside the warm window) and after
 *      8-9 s (past it).
 * 3. Idle release: an EventSource-style client (sse.ts openReconnecting) on a server with
 *    SSE_IDLE_RELEASE_MS = `RELEASE_TEST_MS` and SSE_RETRY_MS = 1000, writes at seeded random
 *    pauses, so it is released and reconnects several times: every event must arrive once
 *    (missed and duplicates counted), latency split by whether the write came while the client
 *    was connected or away; per reconnect, the time from one stream's end to the next one's
 *    opening comment, and the connection's DynamoDB calls beyond idle polling.
 *
 * From these, `policyRows` prices candidate holding policies per always-open connection-month
 * (test/bench/cost/prices.ts): the function's held time, idle polling, reconnects, and how many
 * events wait out a reconnect.
 */
import { startChildServer } from './child.js';
import type { ChildServer } from './child.js';
import { PRICES } from './cost/prices.js';
import { SSE } from './cost/operations.js';
import { latency } from './events.js';
import type { Latency } from './events.js';
import { BENCH_CONFIG, BenchClient, CHATS, Rng, phaseRunner } from './scenario.js';
import type { Failure, Log, PhaseTiming } from './scenario.js';
import { openReconnecting, openStream } from './sse.js';
import type { BenchStream } from './sse.js';
import { f1, f2, textTable } from './stats.js';
import type { Sample } from './stats.js';

const STREAM = '/api/v1/events/stream';
const CADENCES = [1000, 500, 250];
const IDLE_WINDOW_MS = 30_000;
const PAUSE_MS = 3000;
/**
 * Each pause is PAUSE_MS plus a seeded random share of a second: the stream's poll backs off
 * 100 ms × 1.5 per empty poll from its last event and reaches its 1 s cadence 2.1 s after it, so
 * a fixed 3 s pause writes at the same point of the poll cycle every time (measured: p50 77 ms
 * at 1 s polling, which no client sees); the jitter spreads writes over the cycle, as real ones are.
 */
const JITTER_MS = 1000;
const SAMPLES = 16;
const RELEASE_TEST_MS = 4000;
const RELEASE_RETRY_MS = 1000;
const RELEASE_RUN_MS = 40_000;
const MONTH_S = 30 * 24 * 3600;

export interface IdleCost {
  setup: string;
  idlePollMs: number;
  /** The default warm window on (6 s at 200 ms after the last event, here after the start). */
  warm: boolean;
  ms: number;
  calls: number;
  callsPerMinute: number;
  /** AWS terms, see the file comment. */
  rruPerMinute: number;
}

export interface AfterIdle {
  setup: string;
  idlePollMs: number;
  /** The quiet before each write: pauseMs plus up to JITTER_MS. */
  pauseMs: number;
  samples: number;
  missed: number;
  latencyMs: Latency;
  valuesMs: number[];
}

export interface ReleaseRun {
  idleReleaseMs: number;
  retryMs: number;
  writes: number;
  received: number;
  missed: number;
  duplicates: number;
  connections: number;
  /** Writes answered while the client was connected / away, and their latencies. */
  connectedMs: Latency;
  awayMs: Latency;
  away: number;
  /** From a stream's end to the next stream's opening comment (retry hint included). */
  reconnectMs: Latency;
  /** Mean DynamoDB calls of a released connection beyond its idle polling (start + ramp). */
  callsPerReconnect: number;
}

export interface SsePolicyReport {
  idle: IdleCost[];
  /** DynamoDB calls one warm window adds (the defaults' idle connection against the 1 s cadence's). */
  warmCallsPerBurst?: number;
  afterIdle: AfterIdle[];
  release?: ReleaseRun;
}

export interface SsePolicyResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  ssePolicy: SsePolicyReport;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RRU per minute in AWS terms from calls per minute (strong: the sequence check every 5 s). */
export const rruPerMinute = (callsPerMinute: number): number => {
  const strong = Math.min(callsPerMinute, SSE.strongCallsPerMinute);
  return strong + (callsPerMinute - strong) * 0.5;
};

export async function runSsePolicyScenarios(baseUrl: string, log: Log): Promise<SsePolicyResult> {
  const client = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const phase = phaseRunner([client], phases, log);
  const fail = (label: string, detail: string) =>
    client.failures.push({ label, method: 'GET', path: STREAM, status: 0, body: detail });
  const report: SsePolicyReport = { idle: [], afterIdle: [] };
  const servers: ChildServer[] = [];
  const opened: BenchStream[] = [];

  const open = async (url: string, label: string): Promise<BenchStream | undefined> => {
    const s = await openStream(url);
    opened.push(s);
    if (s.status !== 200 || !(await s.waitFor(() => s.comments.some((c) => c.text === 'stream opened'), 5000))) {
      fail(label, `status ${s.status}, or no opening comment within 5 s`);
      return undefined;
    }
    return s;
  };

  try {
    const created = await client.request<{ id: string }>(`POST ${CHATS} (SSE policy)`, 'POST', CHATS, {
      body: { agentIds: [BENCH_CONFIG.agents[0]!.id], modelId: BENCH_CONFIG.models[0]!.id, title: 'sse policy' },
      expect: 201,
    });
    const chatId = created.body?.id;
    if (!chatId)
      return { samples: client.samples, failures: client.failures, missingUsage: [], phases, ssePolicy: report };

    let local: ChildServer | undefined;
    const byCadence = new Map<number, ChildServer>();
    let releasing: ChildServer | undefined;
    let defaults: ChildServer | undefined;
    await phase('SSE policy: start 6 runtimes', async () => {
      const start = (name: string, env: Record<string, string>) =>
        startChildServer(name, env).then((s) => (servers.push(s), s));
      [local, releasing, defaults] = await Promise.all([
        start('the npm-start-like runtime', {}),
        start('the idle-release runtime', {
          SSE_WRITE_BELL: 'off',
          SSE_WARM_MS: '0',
          SSE_IDLE_RELEASE_MS: String(RELEASE_TEST_MS),
          SSE_RETRY_MS: String(RELEASE_RETRY_MS),
        }),
        start('the AWS-like runtime with default timings', {
          SSE_WRITE_BELL: 'off',
          SSE_IDLE_RELEASE_MS: String(IDLE_WINDOW_MS),
        }),
        ...CADENCES.map((ms) =>
          start(`the ${ms} ms cadence runtime`, {
            // Its own effect tails write when the bench's writes reach them; with the bell on, those
            // writes would wake its streams, which no Lambda instance sees.
            SSE_WRITE_BELL: 'off',
            SSE_WARM_MS: '0',
            SSE_IDLE_POLL_MS: String(ms),
            SSE_IDLE_RELEASE_MS: String(IDLE_WINDOW_MS),
          }).then((s) => void byCadence.set(ms, s)),
        ),
      ]);
    });

    // 1. Idle cost per cadence: all at once, nothing written meanwhile.
    const idleSetups = [
      ...CADENCES.map((ms) => ({ setup: `poll ${ms} ms when idle`, ms, warm: false, server: byCadence.get(ms)! })),
      { setup: 'defaults: 1000 ms, 6 s at 200 ms after an event', ms: 1000, warm: true, server: defaults! },
    ];
    await phase(`SSE policy: idle cost, ${idleSetups.length} setups, ${IDLE_WINDOW_MS / 1000} s`, async () => {
      const streams = await Promise.all(
        idleSetups.map((k) => open(`${k.server.url}${STREAM}?ephemeral=true`, `idle: ${k.setup}`)),
      );
      await Promise.all(streams.map((s) => s && Promise.race([s.ended, sleep(IDLE_WINDOW_MS + 15_000)])));
      idleSetups.forEach(({ setup, ms: idlePollMs, warm }, i) => {
        const usage = streams[i]?.usage();
        if (!usage) return fail(`idle: ${setup}`, 'no ": usage" comment (is EXPOSE_USAGE_HEADERS=1?)');
        if (streams[i]!.events.length > 0) fail(`idle: ${setup}`, 'the idle connection received events');
        const callsPerMinute = (usage.calls / usage.ms) * 60_000;
        report.idle.push({
          setup,
          idlePollMs,
          warm,
          ms: usage.ms,
          calls: usage.calls,
          callsPerMinute,
          rruPerMinute: rruPerMinute(callsPerMinute),
        });
      });
      const plain = report.idle.find((k) => !k.warm && k.idlePollMs === 1000);
      const warm = report.idle.find((k) => k.warm);
      if (plain && warm) report.warmCallsPerBurst = warm.calls - (plain.calls / plain.ms) * warm.ms;
    });

    // 2. First event after quiet.
    const afterIdle = async (
      setup: string,
      idlePollMs: number,
      streamBase: string,
      writeBase: string,
      pauseMs = PAUSE_MS,
      samples = SAMPLES,
    ) => {
      const label = `SSE policy: after ${pauseMs / 1000} s quiet, ${setup}`;
      await phase(label, async () => {
        const s = await open(`${streamBase}${STREAM}?ephemeral=true`, label);
        if (!s) return;
        const writer = writeBase === baseUrl ? client : new BenchClient(writeBase);
        const values: number[] = [];
        let missed = 0;
        const rng = new Rng(idlePollMs + setup.length + pauseMs);
        for (let i = 0; i < samples; i++) {
          await sleep(pauseMs + rng.next() * JITTER_MS);
          const before = s.events.filter((e) => e.event === 'chat.read').length;
          const res = await writer.request(
            `POST mark-read (SSE policy, ${setup})`,
            'POST',
            `${CHATS}/${chatId}/mark-read`,
          );
          const at = performance.now();
          if (res.status !== 200) continue;
          const got = await s.waitFor(() => s.events.filter((e) => e.event === 'chat.read').length > before, 5000);
          const event = s.events.filter((e) => e.event === 'chat.read')[before];
          if (!got || !event) missed += 1;
          else values.push(event.at - at);
        }
        if (writer !== client) client.failures.push(...writer.failures);
        s.close();
        if (missed > 0) fail(label, `${missed} event(s) did not arrive within 5 s`);
        report.afterIdle.push({
          setup,
          idlePollMs,
          pauseMs,
          samples: values.length,
          missed,
          latencyMs: latency(values),
          valuesMs: values.map((v) => Math.round(v * 10) / 10),
        });
      });
    };
    await afterIdle('same process (npm start: write bell)', 1000, local!.url, local!.url);
    for (const ms of CADENCES)
      await afterIdle(`separate processes, poll ${ms} ms`, ms, byCadence.get(ms)!.url, baseUrl);
    const byDefault = 'separate processes, defaults (1000 ms; 6 s at 200 ms after an event)';
    await afterIdle(byDefault, 1000, defaults!.url, baseUrl);
    await afterIdle(byDefault, 1000, defaults!.url, baseUrl, 8000, SAMPLES / 2);

    // 3. Idle release with an EventSource-style client.
    await phase(`SSE policy: idle release ${RELEASE_TEST_MS / 1000} s, ${RELEASE_RUN_MS / 1000} s run`, async () => {
      const rng = new Rng(7);
      const c = openReconnecting(`${releasing!.url}${STREAM}?ephemeral=true`);
      const writes: number[] = [];
      const started = performance.now();
      await sleep(500);
      while (performance.now() - started < RELEASE_RUN_MS) {
        const res = await client.request(
          'POST mark-read (SSE policy, idle release)',
          'POST',
          `${CHATS}/${chatId}/mark-read`,
        );
        if (res.status === 200) writes.push(performance.now());
        await sleep(200 + rng.next() * 2.2 * RELEASE_TEST_MS);
      }
      const reads = () => c.events().filter((e) => e.event === 'chat.read');
      const deadline = performance.now() + 10_000;
      while (reads().length < writes.length && performance.now() < deadline) await sleep(50);
      await sleep(300);
      await c.close();

      const events = reads();
      const ids = events.map((e) => e.id);
      const duplicates = ids.length - new Set(ids).size;
      const openedAt = c.connections.map((x) => x.stream.comments.find((k) => k.text === 'stream opened')?.at);
      const connectedAt = (t: number) =>
        c.connections.some(
          (x, i) => openedAt[i] !== undefined && openedAt[i]! <= t && (x.stream.endedAt() ?? Infinity) >= t,
        );
      const connected: number[] = [];
      const away: number[] = [];
      writes.forEach((at, i) => {
        const e = events[i];
        if (e) (connectedAt(at) ? connected : away).push(e.at - at);
      });
      const gaps: number[] = [];
      for (let i = 0; i + 1 < c.connections.length; i++) {
        const end = c.connections[i]!.stream.endedAt();
        const next = openedAt[i + 1];
        if (end !== undefined && next !== undefined) gaps.push(next - end);
      }
      const idleRate = (report.idle.find((k) => !k.warm && k.idlePollMs === 1000)?.callsPerMinute ?? 0) / 60_000;
      const released = c.connections.map((x) => x.stream.usage()).filter((u) => u !== undefined);
      const extra = released.map((u) => u.calls - u.ms * idleRate);
      const missed = Math.max(0, writes.length - (events.length - duplicates));
      if (missed + duplicates > 0) fail('idle release', `${missed} missed, ${duplicates} duplicated event(s)`);
      report.release = {
        idleReleaseMs: RELEASE_TEST_MS,
        retryMs: RELEASE_RETRY_MS,
        writes: writes.length,
        received: events.length,
        missed,
        duplicates,
        connections: c.connections.length,
        connectedMs: latency(connected),
        awayMs: latency(away),
        away: away.length,
        reconnectMs: latency(gaps),
        callsPerReconnect: extra.length ? extra.reduce((a, b) => a + b, 0) / extra.length : Number.NaN,
      };
    });
  } finally {
    for (const s of opened) s.close();
    await Promise.all(servers.map((s) => s.stop()));
  }
  return {
    samples: client.samples,
    failures: client.failures,
    missingUsage: [...client.missingUsage],
    phases,
    ssePolicy: report,
  };
}

/** A holding policy priced per always-open connection-month. */
export interface PolicyRow {
  name: string;
  /** Seconds a connection stays open when nothing happens, and the retry hint. */
  holdS: number;
  retryS: number;
  heldShare: number;
  reconnectsPerMonth: number;
  dollars: number;
  /** Share of events written while the client is away (they wait for its reconnect). */
  awayShare: number;
  /** How long a stream whose client is gone runs on, at most, when nothing happens. */
  abandonedS: number;
}

/**
 * Prices holding policies for a client that stays connected all month with nothing happening:
 * the function held (128 MB arm64) while connected, idle polling at `idleRruPerMinute`, and per
 * reconnect an invocation, a CloudFront request and `rruPerReconnect`; `reconnectS` is the time
 * from a stream's end to the next one's start beyond the retry hint.
 */
export function policyRows(idleRruPerMinute: number, rruPerReconnect: number, reconnectS: number): PolicyRow[] {
  const gbS = PRICES.lambda.gbSecondArm * (SSE.memoryMb / 1024);
  const perReconnect = PRICES.lambda.request + PRICES.cloudFront.httpsRequest + rruPerReconnect * PRICES.dynamodb.rru;
  const row = (name: string, holdS: number, retryS: number, abandonedS = holdS): PolicyRow => {
    const cycle = holdS + retryS + reconnectS;
    const heldShare = holdS / cycle;
    const reconnectsPerMonth = MONTH_S / cycle;
    const held = MONTH_S * heldShare;
    const dollars =
      held * gbS + (held / 60) * idleRruPerMinute * PRICES.dynamodb.rru + reconnectsPerMonth * perReconnect;
    return { name, holdS, retryS, heldShare, reconnectsPerMonth, dollars, awayShare: 1 - heldShare, abandonedS };
  };
  return [
    row('before: 14-min lifetime, retry 1 s', 14 * 60, 1),
    row('idle release 1 min, retry 1 s', 60, 1),
    row('idle release 5 min, retry 1 s', 300, 1),
    row('idle release 5 min, retry 10 s', 300, 10),
    row('idle release 2 min, retry 60 s', 120, 60),
  ];
}

export function ssePolicyTables(r: SsePolicyReport): string {
  const out: string[] = [];
  out.push(
    textTable(
      ['SSE connection, nothing written', 'open s', 'calls', 'calls/min', 'RRU/min (AWS)', '$/conn-month RRU'],
      r.idle.map((k) => [
        k.setup,
        f1(k.ms / 1000),
        String(k.calls),
        f1(k.callsPerMinute),
        f1(k.rruPerMinute),
        f2(k.rruPerMinute * 60 * 24 * 30 * PRICES.dynamodb.rru),
      ]),
    ),
  );
  if (r.warmCallsPerBurst !== undefined) {
    const rru = r.warmCallsPerBurst * 0.5;
    out.push(
      `A warm window (6 s at 200 ms after a burst of events) adds ${f1(r.warmCallsPerBurst)} calls = ${f1(rru)} RRU ` +
        `= $${(rru * PRICES.dynamodb.rru * 1e6).toFixed(2)} per million bursts per connection (the defaults' ` +
        'connection against the 1000 ms one over the same time; both start with one).',
    );
  }
  out.push('');
  out.push(
    textTable(
      ['first event after quiet (ms)', 'quiet s', 'n', 'missed', 'min', 'p50', 'p95', 'max'],
      r.afterIdle.map((a) => [
        a.setup,
        `${a.pauseMs / 1000}-${(a.pauseMs + JITTER_MS) / 1000}`,
        String(a.samples),
        String(a.missed),
        f1(a.latencyMs.min),
        f1(a.latencyMs.p50),
        f1(a.latencyMs.p95),
        f1(a.latencyMs.max),
      ]),
    ),
  );
  for (const a of r.afterIdle) out.push(`  ${a.setup}, ${a.pauseMs / 1000} s: ${a.valuesMs.join(' ')}`);
  const rel = r.release;
  if (rel) {
    out.push('');
    out.push(
      `Idle release ${rel.idleReleaseMs / 1000} s, retry ${rel.retryMs / 1000} s, EventSource-style client: ` +
        `${rel.writes} writes, ${rel.received} events, ${rel.missed} missed, ${rel.duplicates} duplicated, ` +
        `${rel.connections} connections; reconnect (end → next opening comment) p50 ${f1(rel.reconnectMs.p50)} ms, ` +
        `max ${f1(rel.reconnectMs.max)} ms; ${f1(rel.callsPerReconnect)} DynamoDB calls per connection beyond ` +
        'idle polling.',
    );
    out.push(
      `  latency, written while connected: p50 ${f1(rel.connectedMs.p50)} ms, max ${f1(rel.connectedMs.max)} ms; ` +
        `while away (${rel.away}): p50 ${f1(rel.awayMs.p50)} ms, max ${f1(rel.awayMs.max)} ms`,
    );
    const idle = r.idle.find((k) => !k.warm && k.idlePollMs === 1000);
    if (idle) {
      // Per reconnect: 2 strongly consistent GetItems (sequence, Last-Event-ID's event), the rest polls
      // (the release run has no warm window; a new connection starts one: added).
      const rru = 2 + Math.max(0, rel.callsPerReconnect - 2) * 0.5 + (r.warmCallsPerBurst ?? 0) * 0.5;
      out.push('');
      out.push(
        `Holding policies for an always-open, quiet connection (128 MB arm64, idle polling ${f1(idle.rruPerMinute)} ` +
          `RRU/min, ${f1(rru)} RRU + an invocation + a CloudFront request per reconnect, reconnect ` +
          `${f1(rel.reconnectMs.p50 - rel.retryMs)} ms beyond the retry hint):`,
      );
      out.push(
        textTable(
          ['policy', 'held', 'reconnects/month', '$/conn-month', 'events written while away', 'abandoned stream runs'],
          policyRows(idle.rruPerMinute, rru, Math.max(0, rel.reconnectMs.p50 - rel.retryMs) / 1000).map((p) => [
            p.name,
            `${(p.heldShare * 100).toFixed(2)}%`,
            p.reconnectsPerMonth.toFixed(0),
            `$${p.dollars.toFixed(3)}`,
            `${(p.awayShare * 100).toFixed(2)}% (wait ≤ ${p.retryS} s)`,
            `≤ ${p.abandonedS / 60} min`,
          ]),
        ),
      );
    }
  }
  return out.join('\n');
}
