/**
 * `npm run bench`: boots an in-memory DynamoDB Local and the local runtime in this process,
 * plays the fixed scenario (scenario.ts) over real HTTP, prints latency percentiles and
 * DynamoDB calls / consumed capacity per endpoint, and writes them to .bench/results.json
 * (the previous results, if any, are kept as .bench/previous.json and compared against).
 *
 * DynamoDB Local is always stopped: on success, on error, and on Ctrl-C / SIGTERM.
 *
 * The scenario has these parts, played one after the other: chats (scenario.ts); messages,
 * typing and token streaming (messages.ts); server-sent events: delivery latency with 1
 * and 10 clients, chunk delivery while 20 messages stream, and what an idle connection costs
 * (events.ts, which starts a second local runtime in a child process for the idle phase); and
 * dispatch: input → claimable latency and batches per second with 4 workers (dispatch.ts, on
 * a second local runtime of its own, in batched_sequential mode); and media: upload and
 * download throughput for 1 MB and 20 MB files (direct and through upload sessions and
 * presigned storage URLs) and thumbnail time (media.ts, on the local S3 emulator); and web push:
 * from an agent message's response to the last of 50 devices' push requests leaving, and the
 * DynamoDB cost of one notification (push.ts); and search: latency at 10,000 and 100,000 messages,
 * freshness and the index's write cost (search.ts); and bundles: every function's bundle size and cold
 * import time in a fresh Node 22 process, after a `cdk synth` (bundles.ts; played first, before
 * DynamoDB Local starts, so the machine is quiet).
 *
 * Environment: BENCH_SEED (default 42) changes the scenario's choices; BENCH_CONCURRENCY
 * (default 8) is how many requests are in flight in the concurrent phases (the parallel
 * streams scenario has its own fixed number of streams); BENCH_ONLY=chats, BENCH_ONLY=messages, BENCH_ONLY=requests,
 * BENCH_ONLY=events, BENCH_ONLY=dispatch, BENCH_ONLY=media, BENCH_ONLY=push, BENCH_ONLY=search or BENCH_ONLY=bundles plays one
 * part only (all nine by default). BENCH_ONLY=sse plays the SSE holding-policy and after-idle figures
 * (sse-policy.ts, about 4 minutes on five second runtimes), which the default run leaves out.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { startDynamo } from '../../local/dynamo.js';
import type { LocalDynamo } from '../../local/dynamo.js';
import type { LocalApi } from '../../local/server.js';
import { ensureTable } from '../../local/table.js';
import { startBenchApi } from './local-api.js';
import { bundleTables, runBundleScenarios } from './bundles.js';
import type { BundleReport } from './bundles.js';
import { killChildServers, stopChildServers } from './child.js';
import { dispatchTables, runDispatchScenarios } from './dispatch.js';
import type { DispatchReport } from './dispatch.js';
import { runEventScenarios, sseTables } from './events.js';
import { runSsePolicyScenarios, ssePolicyTables } from './sse-policy.js';
import type { SsePolicyReport } from './sse-policy.js';
import type { SseReport } from './events.js';
import { mediaTables, runMediaScenarios } from './media.js';
import type { MediaReport } from './media.js';
import { runMessageScenarios, streamingTables } from './messages.js';
import { pushTables, runPushScenarios } from './push.js';
import type { PushReport } from './push.js';
import { runRequestScenarios } from './requests.js';
import { runSearchScenarios, searchTables } from './search.js';
import type { SearchReport } from './search.js';
import type { StreamingReport } from './messages.js';
import { SCALE, runScenario } from './scenario.js';
import type { ScenarioResult } from './scenario.js';
import { groupByLabel, serverTable, summarize, summaryTable, textTable, trend, trendTable } from './stats.js';
import type { Sample, Summary, Trend } from './stats.js';

const OUT_DIR = resolve('.bench');
const RESULTS = resolve(OUT_DIR, 'results.json');
const PREVIOUS = resolve(OUT_DIR, 'previous.json');
const TABLE_NAME = 'bench';

let dynamo: LocalDynamo | undefined;
let api: LocalApi | undefined;
let interrupted = false;

async function shutdown(): Promise<void> {
  const [a, d] = [api, dynamo];
  api = dynamo = undefined;
  await stopChildServers().catch(() => undefined);
  await a?.close().catch(() => undefined);
  await d?.stop().catch(() => undefined);
}

function onSignal(signal: NodeJS.Signals): void {
  interrupted = true;
  console.error(`\n${signal}: stopping DynamoDB Local`);
  void shutdown().finally(() => process.exit(130));
}
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
// Last resort if the process exits some other way: never leave the Java process behind.
process.once('exit', () => {
  dynamo?.process.kill('SIGKILL');
  killChildServers();
});

const log = (line: string) => console.error(line);

function summaries(samples: readonly Sample[]): Summary[] {
  return [...groupByLabel(samples)].map(([label, group]) => summarize(label, group));
}

interface Results {
  meta: {
    finishedAt: string;
    commit: string | null;
    dirty: boolean;
    node: string;
    cpus: number;
    seed: number;
    concurrency: number;
    scale: typeof SCALE;
  };
  totals: { wallMs: number; requests: number; requestsPerSecond: number; errors: number };
  phases: ScenarioResult['phases'];
  walks: ScenarioResult['walks'];
  endpoints: Summary[];
  growth: Summary[];
  trends: Trend[];
  /** Absent when BENCH_ONLY=chats or events. */
  streaming?: StreamingReport;
  /**
   * Server-sent events: delivery latency, chunk delivery, idle cost. Absent unless all parts or
   * BENCH_ONLY=events run.
   */
  sse?: SseReport;
  /** SSE holding policy and first event after quiet (sse-policy.ts). Only with BENCH_ONLY=sse. */
  ssePolicy?: SsePolicyReport;
  /** Dispatch: input → claimable latency, backlog throughput. Absent unless all parts or BENCH_ONLY=dispatch run. */
  dispatch?: DispatchReport;
  /** Media: upload/download throughput, thumbnail time. Absent unless all parts or BENCH_ONLY=media run. */
  media?: MediaReport;
  /** Web push: message → last of 50 push requests leaving, cost per notification. All parts or BENCH_ONLY=push. */
  push?: PushReport;
  /** Search: latency at 10,000 and 100,000 messages, freshness, index write cost. All parts or BENCH_ONLY=search. */
  search?: SearchReport;
  /** Bundles: size and cold import time of every function's bundle. All parts or BENCH_ONLY=bundles. */
  bundles?: BundleReport;
}

function git(args: string[]): string | null {
  const out = spawnSync('git', args, { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : null;
}

/** p50 and cost per endpoint against the previous run, for labels present in both. */
function comparison(previous: Results, current: Results): string {
  const before = new Map(previous.endpoints.map((s) => [s.label, s]));
  const pct = (now: number, then: number) =>
    then === 0 ? (now === 0 ? '=' : 'new') : `${now >= then ? '+' : ''}${(((now - then) / then) * 100).toFixed(0)}%`;
  const rows = current.endpoints.flatMap((s) => {
    const p = before.get(s.label);
    if (!p) return [];
    return [
      [
        s.label,
        `${p.latencyMs.p50.toFixed(1)} → ${s.latencyMs.p50.toFixed(1)}`,
        pct(s.latencyMs.p50, p.latencyMs.p50),
        `${p.calls.mean.toFixed(2)} → ${s.calls.mean.toFixed(2)}`,
        `${p.rcu.mean.toFixed(2)} → ${s.rcu.mean.toFixed(2)}`,
        `${p.wcu.mean.toFixed(2)} → ${s.wcu.mean.toFixed(2)}`,
      ],
    ];
  });
  const header = ['endpoint (previous → now)', 'p50 ms', 'Δ p50', 'calls', 'RCU', 'WCU'];
  const { finishedAt, commit, concurrency, seed } = previous.meta;
  const setup = `commit ${commit?.slice(0, 7) ?? '?'}, concurrency ${concurrency ?? '?'}, seed ${seed}`;
  return `Compared with the run of ${finishedAt} (${setup}):\n${textTable(header, rows)}`;
}

async function main(): Promise<number> {
  const seed = Number(process.env.BENCH_SEED ?? 42);
  if (!Number.isInteger(seed)) throw new Error(`BENCH_SEED must be an integer, not "${process.env.BENCH_SEED}".`);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 8);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`BENCH_CONCURRENCY must be a positive integer, not "${process.env.BENCH_CONCURRENCY}".`);
  }
  const only = process.env.BENCH_ONLY ?? '';
  if (
    !['', 'chats', 'messages', 'requests', 'events', 'sse', 'dispatch', 'media', 'push', 'search', 'bundles'].includes(
      only,
    )
  ) {
    throw new Error(
      `BENCH_ONLY must be chats, messages, requests, events, sse, dispatch, media, push, search or bundles, ` +
        `not "${only}".`,
    );
  }
  // First, on a quiet machine: a synth and fresh Node processes, no server needed.
  const bundlePart = only === '' || only === 'bundles' ? await runBundleScenarios(log) : undefined;

  log('Starting DynamoDB Local (in memory)...');
  dynamo = await startDynamo();
  await ensureTable(dynamo.endpoint, TABLE_NAME);
  api = await startBenchApi(dynamo.endpoint, TABLE_NAME);
  log(`Local API on ${api.url}, DynamoDB Local on ${dynamo.endpoint}; scenario seed ${seed}`);

  // One untimed request so the first measured one does not pay for connection set-up.
  await fetch(`${api.url}/api/v1/health`).then((r) => r.text());

  const started = performance.now();
  const none: ScenarioResult = { samples: [], probes: [], failures: [], missingUsage: [], phases: [], walks: {} };
  const plays = (part: string) => only === '' || only === part;
  const result = plays('chats') ? await runScenario(api.url, { seed, concurrency }, log) : none;
  const messages = plays('messages') ? await runMessageScenarios(api.url, { seed, concurrency }, log) : undefined;
  const interactive = plays('requests') ? await runRequestScenarios(api.url, { concurrency }, log) : undefined;
  const events = plays('events') ? await runEventScenarios(api.url, { seed, concurrency }, log) : undefined;
  const ssePolicy = only === 'sse' ? await runSsePolicyScenarios(api.url, log) : undefined;
  const dispatch = plays('dispatch') ? await runDispatchScenarios({ seed, concurrency }, log) : undefined;
  const media = plays('media') ? await runMediaScenarios(api.url, log) : undefined;
  const push = plays('push') ? await runPushScenarios(api.url, log) : undefined;
  // Last: it fills the table with 100,000 messages' pointers.
  const searchPart = plays('search') ? await runSearchScenarios(api.url, log) : undefined;
  for (const part of [messages, interactive, events, ssePolicy, dispatch, media, push]) {
    if (!part) continue;
    result.samples.push(...part.samples);
    result.failures.push(...part.failures);
    result.missingUsage.push(...part.missingUsage);
    result.phases.push(...part.phases);
  }
  const wallMs = performance.now() - started;

  const requests = result.samples.length + result.probes.length;
  const endpoints = summaries(result.samples);
  const growth = summaries(result.probes);
  const trends = [...groupByLabel(result.samples)].flatMap(([label, group]) => trend(label, group) ?? []);
  const errors = endpoints.reduce((n, s) => n + s.errors, 0) + growth.reduce((n, s) => n + s.errors, 0);
  const results: Results = {
    meta: {
      finishedAt: new Date().toISOString(),
      commit: git(['rev-parse', 'HEAD']),
      dirty: (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
      node: process.version,
      cpus: cpus().length,
      seed,
      concurrency,
      scale: SCALE,
    },
    totals: { wallMs, requests, requestsPerSecond: requests / (wallMs / 1000), errors },
    phases: result.phases,
    walks: result.walks,
    endpoints,
    growth,
    trends,
    ...(messages ? { streaming: messages.streaming } : {}),
    ...(events ? { sse: events.sse } : {}),
    ...(ssePolicy ? { ssePolicy: ssePolicy.ssePolicy } : {}),
    ...(dispatch ? { dispatch: dispatch.dispatch } : {}),
    ...(media ? { media: media.media } : {}),
    ...(push ? { push: push.push } : {}),
    ...(searchPart ? { search: searchPart.search } : {}),
    ...(bundlePart ? { bundles: bundlePart.bundles } : {}),
  };

  console.log('\nPer endpoint (latency is client-side, ms; calls/RCU/WCU are DynamoDB per request: mean, then max)\n');
  console.log(summaryTable(endpoints));
  console.log(
    '\nServer side per endpoint (ms): sequential storage round trips (mean), time inside DynamoDB/SQS calls, ' +
      'the middleware chain in all, and the overhead above storage (goal <= 1.5 ms p50)\n',
  );
  console.log(serverTable(endpoints));
  if (growth.length > 0) {
    console.log('\nGrowth probes: the same requests after each batch of creates (cost as the table fills)\n');
    console.log(summaryTable(growth));
  }
  console.log('\nTrend within each endpoint, in request order (CU = RCU + WCU)\n');
  console.log(trendTable(trends));
  if (plays('chats')) {
    console.log(
      '\nList walks (pages, rows): ' +
        Object.entries(result.walks)
          .map(([l, w]) => `${l.replace('GET /api/v1/chats', '') || '(all)'} ${w.pages}/${w.rows}`)
          .join(', '),
    );
  }
  if (messages) {
    console.log(
      "\nMessage streaming: chunks/s counts chunk appends answered 200 over the chunk phase's wall time (creates " +
        'and completes excluded);',
    );
    console.log(
      '"verified" = streams whose content_final came back exactly as the chunks sent. Last table: the long ' +
        "stream's chunk #1 vs its last chunk.\n",
    );
    console.log(streamingTables(messages.streaming));
  }
  if (events) {
    console.log(
      "\nServer-sent events (GET /api/v1/events/stream): latency from a write's HTTP response at the bench to its " +
        'event at each client (negative: the event came first);',
    );
    console.log(
      `delivery runs write ${SCALE.sseWrites} times ${SCALE.sseWritePauseMs} ms apart, then ${SCALE.sseIdleWrites} ` +
        `times each after ${SCALE.sseIdlePauseMs / 1000} s without events (the server's poll backs off to 1 s when ` +
        `idle).`,
    );
    console.log(
      `Idle: each connection open ${SCALE.sseIdleMs / 1000} s on a second server ` +
        `(SSE_LIFETIME_MS=${SCALE.sseIdleMs}), cost from its closing ": usage" comment, scaled to a minute.\n`,
    );
    console.log(sseTables(events.sse));
  }
  if (ssePolicy) {
    console.log(
      "\nSSE holding policy and first event after quiet (sse-policy.ts): latency from a write's HTTP response " +
        'at the bench to its event at the client; idle cost from the connections\' closing ": usage" comments.\n',
    );
    console.log(ssePolicyTables(ssePolicy.ssePolicy));
  }
  if (dispatch) {
    const d = dispatch.dispatch;
    const c = d.config;
    console.log(
      `\nDispatch, on a second server (own queues) in ${c.mode} mode: debounce ${c.batchDebounceMs} ms, typing ` +
        `grace ${c.typingGraceMs} ms, max wait ${c.maxBatchWaitMs} ms;`,
    );
    console.log(
      `${d.workers} workers loop on POST /api/v1/dispatch/claim (waitMs ${d.claimWaitMs}) and complete each batch ` +
        `at once. Latency: from a user message's POST response`,
    );
    console.log(
      "at the bench to the claim response carrying its batch at a worker. Throughput: from the workers' start " +
        '(backlog sealed) to the last complete.\n',
    );
    console.log(dispatchTables(d));
  }
  if (media) {
    const { limits } = media.media;
    console.log(
      `\nMedia, one request at a time on one chat (MB = 1,048,576 bytes; directUploadMaxBytes ` +
        `${limits.directUploadMaxBytes}, maxUploadBytes ${limits.maxUploadBytes}):`,
    );
    console.log(
      '"whole" rows add up their stages; MB/s is the file size over the p50 time; calls/RCU/WCU are per request ' +
        '(per upload or download for "whole"),',
    );
    console.log(
      "from the API responses' x-ddb-* headers: the storage requests (presigned POST and GET, to the in-process S3 " +
        'emulator) have none ("-").\n',
    );
    console.log(mediaTables(media.media));
  }
  if (push) {
    const p = push.push;
    console.log(
      `\nWeb push: ${p.devices} devices subscribed; ${p.notifications} agent messages one at a time; the stand-in ` +
        `push service answers ` +
        `201 after ${p.serviceMs} ms; deliveries run 16 at a time. Locally the notifier polls the event log every ` +
        `200 ms (in AWS: the table's stream).\n`,
    );
    console.log(pushTables(p));
  }
  if (searchPart) {
    console.log(
      '\nSearch: generated corpus (Zipf over 200 common words and 3,000 rare ones, 10–80 words per message, 50 ' +
        'chats), indexed in batches of 100; latency over HTTP, one request at a time, limit 50, 10 runs per query ' +
        'after one warm-up.\n',
    );
    console.log(searchTables(searchPart.search));
  }
  if (bundlePart) {
    console.log(
      `\nBundles (cdk synth ${(bundlePart.bundles.synthMs / 1000).toFixed(0)} s): the JavaScript a cold start reads ` +
        '(index.mjs and the chunks it imports), all chunks (with those loaded on first use), the source maps (never ' +
        `loaded at init), and the median of 5 cold imports in fresh Node ${bundlePart.bundles.node} processes ` +
        '(goals: 250 KB at init, 150 ms).\n',
    );
    console.log(bundleTables(bundlePart.bundles));
  }
  console.log(
    '\nNote: DynamoDB Local reports a flat figure per TransactWriteItems (2 WCU per KB of its largest item: 1, 2 or ' +
      '4 small items are all 2 WCU), ' +
      'where AWS charges 2 WCU per KB of every item, so WCU of transactional writes (chat ' +
      'create/patch/archive/mark-*, message create, chunk, complete, typing, media upload and finalize) are lower ' +
      'bounds.',
  );
  console.log(
    `\nTotal: ${requests} requests in ${(wallMs / 1000).toFixed(1)} s = ` +
      `${results.totals.requestsPerSecond.toFixed(0)} requests/s (${concurrency} in flight where concurrent), ` +
      `errors: ${errors}`,
  );

  mkdirSync(OUT_DIR, { recursive: true });
  if (existsSync(RESULTS)) {
    try {
      const previous = JSON.parse(readFileSync(RESULTS, 'utf8')) as Results;
      console.log(`\n${comparison(previous, results)}`);
      renameSync(RESULTS, PREVIOUS);
    } catch (error) {
      log(`(could not compare with the previous ${RESULTS}: ${(error as Error).message})`);
    }
  }
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults written to ${RESULTS}`);

  if (result.missingUsage.length > 0) log(`warning: no x-ddb-* headers on: ${result.missingUsage.join(', ')}`);
  if (result.failures.length > 0) {
    log(`\n${result.failures.length} request(s) failed; the first ones:`);
    for (const f of result.failures.slice(0, 10)) log(`  ${f.status} ${f.method} ${f.path} (${f.label}): ${f.body}`);
    return 1;
  }
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  // After Ctrl-C the requests in flight fail as the servers go away: not worth a stack trace.
  if (!interrupted) console.error('bench failed:', error);
  code = 1;
} finally {
  await shutdown();
}
// Lingering keep-alive sockets must not hold the process open.
process.exit(code);
