/**
 * The benchmark's dispatch workload (contract §4.4, §5.11; docs/dispatch-plan.md): user
 * messages become inputs, the flush consumer seals them into batches after the debounce, and
 * workers claim and complete the batches. Every worker here is `dispatchWorkers` loops of
 * POST /dispatch/claim (waitMs `dispatchClaimWaitMs`) and, for each batch received,
 * POST /dispatch/{batchId}/complete at once.
 *
 * 1. Input → claimable: the workers wait on claim while user messages arrive one at a time
 *    per chat: a chat posts its next message only once the previous one's batch was
 *    completed, after a seeded pause of up to `dispatchLatencyPauseMs`, so every message is a
 *    batch of its own. First one chat alone (`dispatchSoloMessages` messages: the pipeline's
 *    own cost), then `dispatchLatencyChats` other chats at once (`dispatchLatencyMessages`
 *    each: what a busy server adds). Latency runs from the message POST's response arriving at
 *    the bench to the claim response carrying its batch arriving at a worker; the debounce
 *    (600 ms from the input's creation, which is a little before its response) is most of it,
 *    and the rest is reported as the overhead, then split into stages using the message's
 *    created_at and the batch's created_at (sealing start) and started_at (lease), read back
 *    from the table after the runs.
 * 2. Throughput: `dispatchBacklogChats` chats receive `dispatchBacklogRounds` rounds of one user
 *    message each; after each round the bench waits until every chat's dispatch state shows
 *    the round sealed and handed to the queue (read from the table, as the integration tests
 *    do: no API tells), so each message is a batch of its own, a chat's batches queued in
 *    order behind each other. Only then do the workers start: batches per second from their
 *    start to the last complete, claim and complete latency and DynamoDB cost per request.
 *
 * Both runs check what the workers received against what was sent: every message exactly once
 * (missing, duplicates) and each chat's messages in the order they were posted (order
 * violations); any of these, and an input whose batch never comes, are failures (exit 1).
 *
 * Stopping: workers long-poll for 20 s, and an aborted long-poll would swallow the emulator's
 * next message (docs/dispatch-plan.md), so the workers are never cut off. Instead each run ends
 * by posting one message to each of `dispatchWorkers` wake-up chats: every worker leaves after
 * completing one wake-up batch, so all of them return within about the debounce. Those
 * requests are left out of the figures.
 *
 * Choice: these runs use a second local runtime (child-server.ts, a child process on the same
 * DynamoDB Local and table) with an INSTANCE_CONFIG of its own: BENCH_CONFIG plus
 * server.dispatch pinned to DISPATCH_CONFIG (batched_sequential, the contract's defaults). The
 * bench's own server runs that mode too (the default), but by now its batch queue is full of
 * batches nobody claims: every chat created with a firstMessage (~400 in scenario.ts) and every
 * user message of messages.ts sealed one. Workers there would drain hundreds of foreign batches
 * first, and neither the latency nor the throughput would be the scenario's. The local runtime
 * starts its SQS emulator in-process, so a second process comes with empty queues of its own,
 * and its own flush consumer; the pinned settings keep the figures comparable if the defaults
 * change. It costs a few seconds of start-up.
 */
import { startChildServer } from './child.js';
import type { ChildServer } from './child.js';
import { latency } from './events.js';
import type { Latency } from './events.js';
import { BENCH_CONFIG, BenchClient, CHATS, Rng, SCALE, inPool, phaseRunner } from './scenario.js';
import type { Failure, Log, PhaseTiming, ScenarioOptions } from './scenario.js';
import { SUMMARY_HEADER, f1, f2, summarize, summaryCells, textTable } from './stats.js';
import type { Sample, Summary } from './stats.js';

const DISPATCH = '/api/v1/dispatch';

/** The dispatch settings of the second runtime (contract defaults; the rest stays default). */
export const DISPATCH_CONFIG = {
  mode: 'batched_sequential',
  batchDebounceMs: 600,
  typingGraceMs: 2000,
  maxBatchWaitMs: 30_000,
} as const;

/** How long a chat waits for its message's batch before giving up (past maxBatchWaitMs). */
const INPUT_TIMEOUT_MS = DISPATCH_CONFIG.maxBatchWaitMs + 5000;

interface Item {
  inputId: string;
  sourceKind: string;
  sourceId: string;
  content: string;
}
interface Batch {
  batchId: string;
  chatId: string;
  kind: string;
  items: Item[];
}

/** What the workers received against what was sent. */
export interface Delivery {
  /** Messages posted (201). */
  sent: number;
  /** Batches received, and how many of them held more than one input. */
  batches: number;
  multiInputBatches: number;
  /** Distinct messages received. */
  received: number;
  missing: number;
  duplicates: number;
  /** A message received after a later message of its chat. */
  orderViolations: number;
  /** Items that match no message sent. */
  strays: number;
}

export interface DispatchLatencyRun extends Delivery {
  name: string;
  chats: number;
  messagesPerChat: number;
  /** Message POST response → claim response carrying it. */
  latencyMs: Latency;
  /** The same, less the debounce. */
  overheadMs: Latency;
  /**
   * Where the time went, from wall-clock stamps (the server's message created_at, the batch's
   * created_at = seal start and started_at = lease, read back from the table afterwards; the
   * bench's Date.now() at the two responses). Same machine, so one clock; ms resolution.
   */
  stages: { name: string; latencyMs: Latency }[];
}

export interface DispatchBacklogRun extends Delivery {
  chats: number;
  rounds: number;
  /** Per round, from its last message's response until every chat showed it sealed and queued. */
  sealMs: number[];
  /** From the workers' start to the last complete answered. */
  wallMs: number;
  batchesPerSecond: number;
  claim: Summary;
  complete: Summary;
  /** Claims that waited and came back 204 (none expected). */
  emptyClaims: number;
}

export interface DispatchReport {
  config: typeof DISPATCH_CONFIG;
  workers: number;
  claimWaitMs: number;
  /** The second runtime's start-up. */
  startMs: number;
  /** One chat alone, then many chats at once. */
  latency?: DispatchLatencyRun[];
  backlog?: DispatchBacklogRun;
  /** Claim and complete of the latency run (the claims include their long-poll wait). */
  latencyClaim?: Summary;
  latencyComplete?: Summary;
}

export interface DispatchScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  dispatch: DispatchReport;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Sent {
  messageId: string;
  chatId: string;
  /** Position among its chat's messages. */
  seq: number;
}
interface Got {
  chatId: string;
  sourceId: string;
}

/** Checks the items received (in the order their batches arrived) against the messages sent. */
function delivery(sent: readonly Sent[], got: readonly Got[], batches: readonly Batch[]): Delivery {
  const byId = new Map(sent.map((s) => [s.messageId, s]));
  const seen = new Set<string>();
  const highest = new Map<string, number>();
  let duplicates = 0;
  let orderViolations = 0;
  let strays = 0;
  for (const g of got) {
    const s = byId.get(g.sourceId);
    if (!s || s.chatId !== g.chatId) {
      strays += 1;
      continue;
    }
    if (seen.has(g.sourceId)) {
      duplicates += 1;
      continue;
    }
    seen.add(g.sourceId);
    const h = highest.get(s.chatId) ?? -1;
    if (s.seq < h) orderViolations += 1;
    highest.set(s.chatId, Math.max(h, s.seq));
  }
  return {
    sent: sent.length,
    batches: batches.length,
    multiInputBatches: batches.filter((b) => b.items.length > 1).length,
    received: seen.size,
    missing: sent.length - seen.size,
    duplicates,
    orderViolations,
    strays,
  };
}

export async function runDispatchScenarios(options: ScenarioOptions, log: Log): Promise<DispatchScenarioResult> {
  const { concurrency } = options;
  const rng = new Rng(options.seed + 5);
  const phases: PhaseTiming[] = [];
  const workers = SCALE.dispatchWorkers;
  const report: DispatchReport = {
    config: DISPATCH_CONFIG,
    workers,
    claimWaitMs: SCALE.dispatchClaimWaitMs,
    startMs: 0,
  };
  // Read only now: the runner set the environment (DynamoDB Local, table) before the first import.
  const { getBatch } = await import('../../functions/store/dispatch/batches.js');
  const { getState } = await import('../../functions/store/dispatch/state.js');

  let server: ChildServer | undefined;
  const startPhase = phaseRunner([], phases, log);
  const started = await startPhase('dispatch: start a second server', async () => {
    server = await startChildServer('the dispatch server', {
      INSTANCE_CONFIG: JSON.stringify({ ...BENCH_CONFIG, server: { dispatch: DISPATCH_CONFIG } }),
      // Its own queues: startLocalApi creates them; the bench server's must not leak in.
      SQS_ENDPOINT: undefined,
      DISPATCH_QUEUE_URL: undefined,
      FLUSH_QUEUE_URL: undefined,
    });
  });
  report.startMs = started.ms;
  const client = new BenchClient(server!.url);
  // Wake-up messages: their samples are dropped, their failures kept.
  const wakeClient = new BenchClient(server!.url);
  const phase = phaseRunner([client, wakeClient], phases, log);
  /** Worker requests about wake-up batches: left out of the figures. */
  const excluded = new Set<Sample>();
  const fail = (label: string, detail: string) =>
    client.failures.push({ label, method: 'POST', path: DISPATCH, status: 0, body: detail });

  try {
    await fetch(`${server!.url}/api/v1/health`).then((r) => r.text());

    const chatLabel = `POST ${CHATS} (for dispatch)`;
    const newChats = async (count: number, title: string) => {
      const slots: (string | undefined)[] = [];
      await inPool(
        Array.from({ length: count }, (_, i) => i),
        concurrency,
        async (i) => {
          const body = {
            agentIds: [BENCH_CONFIG.agents[i % BENCH_CONFIG.agents.length]!.id],
            modelId: BENCH_CONFIG.models[0]!.id,
            title: `${title} ${i}`,
          };
          const res = await client.request<{ id: string }>(chatLabel, 'POST', CHATS, { body, expect: 201 });
          slots[i] = res.body?.id;
        },
      );
      return slots.filter((id): id is string => id !== undefined);
    };
    let latencyChats: string[] = [];
    let backlogChats: string[] = [];
    let wakeChats: string[] = [];
    await phase('dispatch: chats', async () => {
      latencyChats = await newChats(1 + SCALE.dispatchLatencyChats, 'dispatch latency');
      backlogChats = await newChats(SCALE.dispatchBacklogChats, 'dispatch backlog');
      wakeChats = await newChats(workers, 'dispatch wake-up');
    });
    const wakeSet = new Set(wakeChats);

    /**
     * `workers` claim/complete loops. Each batch is reported to `onBatch` when its claim
     * response arrives and to `onComplete` once its complete was answered. `stop` posts the
     * wake-up messages and resolves once every worker has left.
     */
    const startWorkers = (
      name: string,
      handlers: { onBatch: (batch: Batch, at: number) => void; onComplete: (batch: Batch) => void },
    ) => {
      const labels = {
        claim: `POST ${DISPATCH}/claim (${name})`,
        empty: `POST ${DISPATCH}/claim (${name}, 204 after waiting)`,
        complete: `POST ${DISPATCH}/{batchId}/complete (${name})`,
      };
      let stopping = false;
      let giveUpAt = Infinity;
      const loop = async (w: number) => {
        const workerId = `bench-worker-${w + 1}`;
        for (;;) {
          if (performance.now() > giveUpAt)
            return fail(labels.claim, `${workerId} received no wake-up batch: left without it`);
          const res = await client.request<Batch>(labels.claim, 'POST', `${DISPATCH}/claim`, {
            body: { workerId, waitMs: SCALE.dispatchClaimWaitMs },
            expect: [200, 204],
          });
          const at = performance.now();
          if (res.status === 204) {
            res.sample.label = labels.empty;
            continue;
          }
          const batch = res.body;
          if (res.status !== 200 || !batch?.batchId) {
            await sleep(100);
            continue;
          }
          const wake = wakeSet.has(batch.chatId);
          if (wake) excluded.add(res.sample);
          else handlers.onBatch(batch, at);
          const done = await client.request(labels.complete, 'POST', `${DISPATCH}/${batch.batchId}/complete`, {
            body: { workerId },
            expect: 204,
          });
          if (wake) {
            excluded.add(done.sample);
            return;
          }
          handlers.onComplete(batch);
        }
      };
      // A worker whose request throws (the server went away) is a failure, never an unhandled rejection.
      const loops = Array.from({ length: workers }, (_, w) =>
        loop(w).catch((error: unknown) => fail(labels.claim, `bench-worker-${w + 1} stopped: ${String(error)}`)),
      );
      return {
        labels,
        stop: async () => {
          if (stopping) return;
          stopping = true;
          giveUpAt = performance.now() + SCALE.dispatchClaimWaitMs + 15_000;
          await Promise.all(
            wakeChats.map((chatId) =>
              wakeClient.request(
                `POST ${CHATS}/{chatId}/messages (dispatch wake-up)`,
                'POST',
                `${CHATS}/${chatId}/messages`,
                {
                  body: { role: 'user', content: 'wake up' },
                  expect: 201,
                },
              ),
            ),
          );
          await Promise.all(loops);
        },
      };
    };

    // 1. Input → claimable, one message at a time per chat: one chat alone, then many at once.
    if (latencyChats.length > 0) {
      const sent: (Sent & { postedAt: number; postedEpoch: number; createdAt: string | undefined })[] = [];
      const got: Got[] = [];
      const batches: Batch[] = [];
      const arrivals = new Map<string, number>();
      /** Per message: the batch that carried it first, and Date.now() when it arrived. */
      const carriers = new Map<string, { batchId: string; epoch: number }>();
      const completed = new Set<string>();
      const waiting = new Map<string, () => void>();
      const whenCompleted = (messageId: string) =>
        new Promise<boolean>((ok) => {
          if (completed.has(messageId)) return ok(true);
          const timer = setTimeout(() => {
            waiting.delete(messageId);
            ok(false);
          }, INPUT_TIMEOUT_MS);
          waiting.set(messageId, () => {
            clearTimeout(timer);
            ok(true);
          });
        });
      const name = `inputs one by one, ${workers} workers`;
      const postLabel = `POST ${CHATS}/{chatId}/messages (user, dispatch one by one)`;
      const pool = startWorkers(name, {
        onBatch: (batch, at) => {
          const epoch = Date.now();
          batches.push(batch);
          for (const item of batch.items) {
            got.push({ chatId: batch.chatId, sourceId: item.sourceId });
            if (arrivals.has(item.sourceId)) continue;
            arrivals.set(item.sourceId, at);
            carriers.set(item.sourceId, { batchId: batch.batchId, epoch });
          }
        },
        onComplete: (batch) => {
          for (const item of batch.items) {
            completed.add(item.sourceId);
            waiting.get(item.sourceId)?.();
            waiting.delete(item.sourceId);
          }
        },
      });
      const runs = [
        {
          title: `1 chat x ${SCALE.dispatchSoloMessages} messages, one at a time`,
          chats: latencyChats.slice(0, 1),
          perChat: SCALE.dispatchSoloMessages,
        },
        {
          title: `${latencyChats.length - 1} chats x ${SCALE.dispatchLatencyMessages} messages, one at a time per chat`,
          chats: latencyChats.slice(1),
          perChat: SCALE.dispatchLatencyMessages,
        },
      ];
      let stopped = false;
      try {
        for (const run of runs) {
          // Drawn up front: the draws must not depend on how the chats interleave.
          const pauses = run.chats.map(() =>
            Array.from({ length: run.perChat }, () => rng.int(SCALE.dispatchLatencyPauseMs)),
          );
          await phase(`dispatch: ${run.title}`, () =>
            Promise.all(
              run.chats.map(async (chatId, c) => {
                for (let m = 0; m < run.perChat; m++) {
                  // The chats' first messages are also spread over their first ~0.6 s.
                  await sleep(pauses[c]![m]! + (m === 0 ? c * 30 : 0));
                  const res = await client.request<{ id: string; created_at?: string }>(
                    postLabel,
                    'POST',
                    `${CHATS}/${chatId}/messages`,
                    {
                      body: { role: 'user', content: `dispatch latency: chat ${c}, message ${m}` },
                      expect: 201,
                    },
                  );
                  const postedAt = performance.now();
                  const postedEpoch = Date.now();
                  const messageId = res.body?.id;
                  if (res.status !== 201 || !messageId) continue;
                  sent.push({ messageId, chatId, seq: m, postedAt, postedEpoch, createdAt: res.body?.created_at });
                  if (!(await whenCompleted(messageId))) {
                    fail(
                      pool.labels.claim,
                      `${run.title}: message ${m} of chat ${c} not completed within ${INPUT_TIMEOUT_MS / 1000} s; ` +
                        `the chat stops here`,
                    );
                    return;
                  }
                }
              }),
            ).then(() => undefined),
          );
        }
        stopped = true;
        await phase('dispatch: stop the workers (wake-up batches)', () => pool.stop());
      } finally {
        if (!stopped) await pool.stop();
      }

      // The stages, from the batches' own stamps (read after the runs, so they cost them nothing).
      const records = new Map<string, { created_at: string; started_at?: string }>();
      await inPool(batches, concurrency, async (b) => {
        const record = await getBatch(b.batchId);
        if (record) records.set(b.batchId, record);
      });
      report.latency = runs.map((run) => {
        const chats = new Set(run.chats);
        const mine = sent.filter((s) => chats.has(s.chatId));
        const values = mine.flatMap((s) => {
          const at = arrivals.get(s.messageId);
          return at === undefined ? [] : [at - s.postedAt];
        });
        const stage = {
          posted: [] as number[],
          sealing: [] as number[],
          leasing: [] as number[],
          delivering: [] as number[],
        };
        for (const s of mine) {
          const carrier = carriers.get(s.messageId);
          const record = carrier && records.get(carrier.batchId);
          if (!s.createdAt || !carrier || !record?.started_at) continue;
          const created = Date.parse(s.createdAt);
          const sealed = Date.parse(record.created_at);
          const leased = Date.parse(record.started_at);
          stage.posted.push(s.postedEpoch - created);
          stage.sealing.push(sealed - created);
          stage.leasing.push(leased - sealed);
          stage.delivering.push(carrier.epoch - leased);
        }
        const check = delivery(
          mine,
          got.filter((g) => chats.has(g.chatId)),
          batches.filter((b) => chats.has(b.chatId)),
        );
        reportProblems(`${name}: ${run.title}`, check, fail);
        return {
          name: run.title,
          chats: run.chats.length,
          messagesPerChat: run.perChat,
          ...check,
          latencyMs: latency(values),
          overheadMs: latency(values.map((v) => v - DISPATCH_CONFIG.batchDebounceMs)),
          stages: [
            { name: 'message created → its POST response at the bench', latencyMs: latency(stage.posted) },
            { name: `message created → sealing starts (debounce, flush queue)`, latencyMs: latency(stage.sealing) },
            {
              name: 'sealing starts → leased by a claim (seal, hand-off, receive)',
              latencyMs: latency(stage.leasing),
            },
            { name: 'leased → claim response at the worker', latencyMs: latency(stage.delivering) },
          ],
        };
      });
      const only = (label: string) => client.samples.filter((s) => s.label === label && !excluded.has(s));
      report.latencyClaim = summarize(pool.labels.claim, only(pool.labels.claim));
      report.latencyComplete = summarize(pool.labels.complete, only(pool.labels.complete));
    }

    // 2. Throughput: a sealed backlog, then the workers.
    if (backlogChats.length > 0) {
      const rounds = SCALE.dispatchBacklogRounds;
      const sent: Sent[] = [];
      const posted = new Map<string, number>(backlogChats.map((id) => [id, 0]));
      const sealMs: number[] = [];
      const postLabel = `POST ${CHATS}/{chatId}/messages (user, dispatch backlog)`;
      for (let r = 0; r < rounds; r++) {
        await phase(`dispatch backlog: round ${r + 1}, ${backlogChats.length} messages, sealed`, async () => {
          await inPool(backlogChats, concurrency, async (chatId, c) => {
            const res = await client.request<{ id: string }>(postLabel, 'POST', `${CHATS}/${chatId}/messages`, {
              body: { role: 'user', content: `dispatch backlog: chat ${c}, round ${r}` },
              expect: 201,
            });
            if (res.status !== 201 || !res.body?.id) return;
            sent.push({ messageId: res.body.id, chatId, seq: r });
            posted.set(chatId, posted.get(chatId)! + 1);
          });
          const from = performance.now();
          // Sealed: every message a batch (one per round), handed to the queue, nothing unsealed.
          const sealed = async () =>
            (await Promise.all(backlogChats.map(async (chatId) => ({ chatId, state: await getState(chatId) })))).every(
              ({ chatId, state }) => (state.batches_sent ?? 0) >= posted.get(chatId)! && !state.pending_inputs,
            );
          let done = await sealed();
          while (!done && performance.now() - from < INPUT_TIMEOUT_MS) {
            await sleep(200);
            done = await sealed();
          }
          sealMs.push(performance.now() - from);
          if (!done)
            fail(postLabel, `round ${r + 1}: not every chat's message was sealed within ${INPUT_TIMEOUT_MS / 1000} s`);
        });
      }

      const got: Got[] = [];
      const batches: Batch[] = [];
      const completed = new Set<string>();
      const name = `backlog, ${workers} workers`;
      let lastComplete = 0;
      let allDone: () => void = () => undefined;
      const finished = new Promise<void>((ok) => (allDone = ok));
      let pool: ReturnType<typeof startWorkers> | undefined;
      let from = 0;
      await phase(`dispatch backlog: ${sent.length} batches, ${workers} workers`, async () => {
        from = performance.now();
        pool = startWorkers(name, {
          onBatch: (batch) => {
            batches.push(batch);
            for (const item of batch.items) got.push({ chatId: batch.chatId, sourceId: item.sourceId });
          },
          onComplete: (batch) => {
            lastComplete = performance.now();
            for (const item of batch.items) completed.add(item.sourceId);
            if (completed.size >= sent.length) allDone();
          },
        });
        if (sent.length === 0) allDone();
        const timeout = sleep(INPUT_TIMEOUT_MS).then(() => 'timeout' as const);
        if ((await Promise.race([finished, timeout])) === 'timeout') {
          fail(
            pool.labels.claim,
            `${sent.length - completed.size} of ${sent.length} backlog messages not completed within ` +
              `${INPUT_TIMEOUT_MS / 1000} s`,
          );
        }
      });
      await phase('dispatch: stop the workers (wake-up batches)', async () => await pool?.stop());
      const wallMs = Math.max(1, lastComplete - from);
      const check = delivery(sent, got, batches);
      const only = (label: string) => client.samples.filter((s) => s.label === label && !excluded.has(s));
      report.backlog = {
        chats: backlogChats.length,
        rounds,
        ...check,
        sealMs,
        wallMs,
        batchesPerSecond: check.batches / (wallMs / 1000),
        claim: summarize(pool!.labels.claim, only(pool!.labels.claim)),
        complete: summarize(pool!.labels.complete, only(pool!.labels.complete)),
        emptyClaims: only(pool!.labels.empty).length,
      };
      reportProblems(name, check, fail);
    }
  } finally {
    await server?.stop();
  }

  return {
    samples: client.samples.filter((s) => !excluded.has(s)),
    failures: [...client.failures, ...wakeClient.failures],
    missingUsage: [...new Set([...client.missingUsage, ...wakeClient.missingUsage])],
    phases,
    dispatch: report,
  };
}

function reportProblems(name: string, d: Delivery, fail: (label: string, detail: string) => void): void {
  const label = `dispatch (${name})`;
  if (d.missing > 0) fail(label, `${d.missing} of ${d.sent} messages never reached a worker`);
  if (d.duplicates > 0) fail(label, `${d.duplicates} message(s) reached a worker twice`);
  if (d.orderViolations > 0)
    fail(label, `${d.orderViolations} message(s) reached a worker after a later message of their chat`);
  if (d.strays > 0) fail(label, `${d.strays} item(s) matched no message sent`);
  if (d.multiInputBatches > 0)
    fail(label, `${d.multiInputBatches} batch(es) held more than one message; the scenario expects one each`);
}

const latencyCells = (l: Latency) => [f1(l.min), f1(l.p50), f1(l.p95), f1(l.p99), f1(l.max)];
const LATENCY_HEADER = ['min ms', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'];
const deliveryCells = (d: Delivery) => [
  String(d.sent),
  String(d.batches),
  String(d.received),
  String(d.missing),
  String(d.duplicates),
  String(d.orderViolations),
];
const DELIVERY_HEADER = ['sent', 'batches', 'received', 'missing', 'dup', 'order viol.'];

/** The dispatch section: input → claimable latency, backlog throughput, claim/complete costs. */
export function dispatchTables(report: DispatchReport): string {
  const parts: string[] = [];
  const debounce = report.config.batchDebounceMs;
  const runs = report.latency ?? [];
  if (runs.length > 0) {
    parts.push(
      textTable(
        ['dispatch input → claimable: message response → batch at worker', ...DELIVERY_HEADER, ...LATENCY_HEADER],
        runs.flatMap((l) => [
          [l.name, ...deliveryCells(l), ...latencyCells(l.latencyMs)],
          [`  overhead beyond the ${debounce} ms debounce`, '', '', '', '', '', '', ...latencyCells(l.overheadMs)],
        ]),
      ),
    );
    parts.push(
      textTable(
        ['input → claimable by stage (server and bench wall clocks)', ...LATENCY_HEADER],
        runs.flatMap((l) => [
          [`${l.name}:`, '', '', '', '', ''],
          ...l.stages.map((st) => [`  ${st.name}`, ...latencyCells(st.latencyMs)]),
        ]),
      ),
    );
  }
  const b = report.backlog;
  if (b) {
    const seal = b.sealMs.map((ms) => (ms / 1000).toFixed(1)).join(' / ');
    parts.push(
      textTable(
        ['dispatch throughput (sealed backlog, claim + complete)', ...DELIVERY_HEADER, 'wall s', 'batches/s', '204s'],
        [
          [
            `${b.chats} chats x ${b.rounds} rounds, ${report.workers} workers`,
            ...deliveryCells(b),
            (b.wallMs / 1000).toFixed(1),
            b.batchesPerSecond.toFixed(1),
            String(b.emptyClaims),
          ],
        ],
      ) +
        `\nEach round sealed and queued ${seal} s after its last message's response (seen in the chats' dispatch ` +
        `state).`,
    );
  }
  const rows: [string, Summary | undefined][] = [
    ['claim, sealed backlog', b?.claim],
    ['complete, sealed backlog', b?.complete],
    [`claim, inputs one by one (includes its long-poll wait)`, report.latencyClaim],
    ['complete, inputs one by one', report.latencyComplete],
  ];
  const present = rows.filter((r): r is [string, Summary] => r[1] !== undefined);
  if (present.length > 0) {
    parts.push(
      textTable(
        ['dispatch request (DynamoDB per request: mean)', ...SUMMARY_HEADER, 'calls', 'RCU', 'WCU'],
        present.map(([what, s]) => [what, ...summaryCells(s), f2(s.calls.mean), f2(s.rcu.mean), f2(s.wcu.mean)]),
      ),
    );
  }
  return parts.join('\n\n');
}
