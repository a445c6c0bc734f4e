/**
 * The benchmark's server-sent events workload (GET /api/v1/events/stream), after the chat and
 * message workloads, on chats of its own:
 *
 * 1. Delivery latency: 1 client, then `sseClients` clients, all connected with
 *    ephemeral=true; `sseWrites` mark-read writes one at a time, `sseWritePauseMs` apart,
 *    rotating over `sseChats` chats; then `sseIdleWrites` writes that each follow
 *    `sseIdlePauseMs` of silence. The server polls the log every 100 ms while events flow and
 *    backs off to once a second when idle, so those writes show the idle → first event case
 *    and are reported apart. Latency, per event per client, runs from the write's HTTP
 *    response arriving at the bench to the matching chat.read event (same payload.chatId and
 *    type; the n-th write to a chat pairs with the n-th such event) arriving at that client.
 *    It may be slightly negative: a poll can deliver the event before the write's response
 *    has made its way back to the bench.
 * 2. Chunk delivery: 1 client; `sseStreams` streaming messages, one per chat, each receiving
 *    `sseChunks` chunks (one after another within a message, messages in parallel). Every
 *    chunk's text starts with its number, so each message.streaming.chunk event (matched by
 *    payload.chatId and type) is tied to its chunk: latency from the chunk's response, events
 *    received against chunks sent, duplicates, and order violations (a chunk arriving after a
 *    later chunk of the same message).
 * 3. Idle cost: one ephemeral=true and one ephemeral=false connection, nothing written, for
 *    `sseIdleMs`, until the server ends them at their lifetime; its final `: usage` comment
 *    gives each connection's DynamoDB calls and consumed capacity, scaled here to a minute.
 *
 *    Choice: this phase runs against a second local runtime (child-server.ts, a child process
 *    on the same DynamoDB Local and table) started with SSE_LIFETIME_MS = `sseIdleMs`, while
 *    the bench's own server keeps the default lifetime (14 min). Handlers read their
 *    environment once per process, and one short lifetime for the whole run would end the
 *    delivery and chunk runs' connections mid-measurement: a reconnect puts its own time into
 *    the latencies, and ephemeral chunks sent while no connection is open are lost for good
 *    (they are never replayed), so the chunk counts would no longer have to match. A second
 *    process costs a few seconds of start-up; nothing else writes while it measures.
 *
 * A missed, extra, duplicated or out-of-order event, a stream that does not open, and a
 * connection that ends without its usage comment are failures (the run exits 1).
 */
import { startChildServer } from './child.js';
import type { ChildServer } from './child.js';
import { BENCH_CONFIG, BenchClient, CHATS, SCALE, inPool, phaseRunner } from './scenario.js';
import type { Failure, Log, PhaseTiming, ScenarioOptions } from './scenario.js';
import { openStream } from './sse.js';
import type { BenchStream } from './sse.js';
import { percentile, textTable } from './stats.js';
import type { Sample } from './stats.js';

const STREAM = '/api/v1/events/stream';
const MESSAGES = '/api/v1/messages';

export interface Latency {
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** One delivery run: writes while `clients` clients are connected. */
export interface DeliveryRun {
  name: string;
  clients: number;
  /** Writes answered 200. */
  writes: number;
  /** Matching events received, over all clients (writes x clients when none is missed). */
  received: number;
  missed: number;
  /** chat.read events for these chats that paired with no write. */
  extra: number;
  latencyMs: Latency;
  /** Every latency, client after client (the idle runs only: they are few). */
  valuesMs?: number[];
}

export interface ChunkDelivery {
  streams: number;
  chunksPerStream: number;
  chunkBytes: number;
  /** Chunk appends answered 200. */
  sent: number;
  /** Chunk events received for these messages, duplicates included. */
  received: number;
  /** Chunks sent whose event never arrived. */
  missing: number;
  duplicates: number;
  /** Events arriving after a later chunk of the same message had arrived. */
  orderViolations: number;
  latencyMs: Latency;
  /** From the first chunk sent to the last chunk answered. */
  wallMs: number;
}

export interface IdleConnection {
  name: string;
  ephemeral: boolean;
  /** The second server's SSE_LIFETIME_MS. */
  lifetimeMs: number;
  /** From the server's `: usage` comment: how long the connection ran, and what it cost. */
  ms: number;
  calls: number;
  rcu: number;
  wcu: number;
  callsPerMinute: number;
  rcuPerMinute: number;
  wcuPerMinute: number;
  /** Events received (0 when the table really was idle). */
  events: number;
}

export interface SseReport {
  delivery: DeliveryRun[];
  chunks?: ChunkDelivery;
  idle: IdleConnection[];
}

export interface EventScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  sse: SseReport;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function latency(values: readonly number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: sorted[0] ?? Number.NaN,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Chunk `i` of a message: `#<i> ` and filler, exactly `bytes` ASCII bytes. */
function chunkText(i: number, bytes: number): string {
  const head = `#${i} `;
  return (head + 'tokens streaming to a connected client '.repeat(Math.ceil(bytes / 39))).slice(0, bytes);
}
const chunkNumber = (text: unknown): number | undefined => {
  const m = typeof text === 'string' ? /^#(\d+) /.exec(text) : null;
  return m ? Number(m[1]) : undefined;
};

export async function runEventScenarios(
  baseUrl: string,
  options: ScenarioOptions,
  log: Log,
): Promise<EventScenarioResult> {
  const { concurrency } = options;
  const client = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const phase = phaseRunner([client], phases, log);
  const agentIds = BENCH_CONFIG.agents.map((a) => a.id);
  const fail = (label: string, detail: string) =>
    client.failures.push({ label, method: 'GET', path: STREAM, status: 0, body: detail });
  const opened: BenchStream[] = [];
  let idleServer: ChildServer | undefined;

  /** Opens a stream and waits for its opening comment; undefined (and a failure) if it does not open. */
  const connect = async (url: string, label: string): Promise<BenchStream | undefined> => {
    const s = await openStream(url);
    opened.push(s);
    if (s.status !== 200) {
      fail(label, `status ${s.status}`);
      return undefined;
    }
    if (!(await s.waitFor(() => s.comments.some((c) => c.text === 'stream opened'), 5000))) {
      fail(label, 'no opening comment within 5 s');
      return undefined;
    }
    return s;
  };
  const parseErrors = (s: BenchStream, label: string) => {
    if (s.errors.length > 0) fail(label, `${s.errors.length} unparseable frame(s), the first: ${s.errors[0]}`);
  };

  const report: SseReport = { delivery: [], idle: [] };
  const chatLabel = `POST ${CHATS} (for SSE)`;
  const newChat = async (i: number) => {
    const body = {
      agentIds: [agentIds[i % agentIds.length]],
      modelId: BENCH_CONFIG.models[i % BENCH_CONFIG.models.length]!.id,
      title: `sse bench ${i}`,
    };
    const res = await client.request<{ id: string }>(chatLabel, 'POST', CHATS, { body, expect: 201 });
    return res.body?.id;
  };

  try {
    // 1. Delivery latency, 1 client then sseClients clients.
    const slots: (string | undefined)[] = [];
    await phase('SSE: chats', () =>
      inPool(
        Array.from({ length: SCALE.sseChats }, (_, i) => i),
        concurrency,
        async (i) => void (slots[i] = await newChat(i)),
      ),
    );
    const chats = slots.filter((id): id is string => id !== undefined);

    for (const clients of [1, SCALE.sseClients]) {
      if (chats.length === 0) break;
      const who = `${clients} client${clients === 1 ? '' : 's'}`;
      const streamLabel = `GET ${STREAM}?ephemeral=true (${who})`;
      const writeLabel = `POST ${CHATS}/{chatId}/mark-read (SSE, ${who})`;
      const streams = (
        await Promise.all(
          Array.from({ length: clients }, () => connect(`${baseUrl}${STREAM}?ephemeral=true`, streamLabel)),
        )
      ).filter((s): s is BenchStream => s !== undefined);
      const writes: { chatId: string; at: number; idle: boolean }[] = [];
      const write = async (chatId: string, idle: boolean) => {
        const res = await client.request(writeLabel, 'POST', `${CHATS}/${chatId}/mark-read`);
        const at = performance.now();
        if (res.status === 200) writes.push({ chatId, at, idle });
      };
      const reads = (s: BenchStream) => s.events.reduce((n, e) => n + (e.event === 'chat.read' ? 1 : 0), 0);
      const delivered = (ms: number) => Promise.all(streams.map((s) => s.waitFor(() => reads(s) >= writes.length, ms)));

      await phase(`SSE delivery, ${who}: ${SCALE.sseWrites} writes`, async () => {
        for (let i = 0; i < SCALE.sseWrites; i++) {
          await write(chats[i % chats.length]!, false);
          await sleep(SCALE.sseWritePauseMs);
        }
        await delivered(10_000);
      });
      await phase(`SSE delivery, ${who}: ${SCALE.sseIdleWrites} writes after idle`, async () => {
        for (let i = 0; i < SCALE.sseIdleWrites; i++) {
          await sleep(SCALE.sseIdlePauseMs);
          await write(chats[(SCALE.sseWrites + i) % chats.length]!, true);
          await delivered(5000);
        }
      });
      for (const s of streams) s.close();

      // Pair, client by client: the n-th write to a chat with the n-th chat.read event for it.
      const flow: number[] = [];
      const idle: number[] = [];
      let missedFlow = 0;
      let missedIdle = 0;
      let extra = 0;
      for (const s of streams) {
        parseErrors(s, streamLabel);
        const arrivals = new Map<string, number[]>();
        for (const e of s.events) {
          if (e.event !== 'chat.read') continue;
          const chatId = String(e.data.payload.chatId);
          const list = arrivals.get(chatId) ?? [];
          list.push(e.at);
          arrivals.set(chatId, list);
        }
        const used = new Map<string, number>();
        for (const w of writes) {
          const n = used.get(w.chatId) ?? 0;
          used.set(w.chatId, n + 1);
          const at = arrivals.get(w.chatId)?.[n];
          if (at === undefined) {
            if (w.idle) missedIdle += 1;
            else missedFlow += 1;
          } else (w.idle ? idle : flow).push(at - w.at);
        }
        for (const [chatId, list] of arrivals) extra += Math.max(0, list.length - (used.get(chatId) ?? 0));
      }
      const flowWrites = writes.filter((w) => !w.idle).length;
      report.delivery.push(
        {
          name: `mark-read, ${SCALE.sseWritePauseMs} ms apart`,
          clients: streams.length,
          writes: flowWrites,
          received: flow.length,
          missed: missedFlow,
          extra,
          latencyMs: latency(flow),
        },
        {
          name: `first write after ${SCALE.sseIdlePauseMs / 1000} s idle`,
          clients: streams.length,
          writes: writes.length - flowWrites,
          received: idle.length,
          missed: missedIdle,
          extra: 0,
          latencyMs: latency(idle),
          valuesMs: idle.map((ms) => Math.round(ms * 10) / 10),
        },
      );
      if (missedFlow + missedIdle > 0)
        fail(
          streamLabel,
          `${missedFlow + missedIdle} chat.read event(s) never arrived (${missedIdle} of them after idle)`,
        );
      if (extra > 0) fail(streamLabel, `${extra} chat.read event(s) matched no write`);
    }

    // 2. Chunk delivery while sseStreams messages stream at once, 1 client.
    {
      const who = `${SCALE.sseStreams} streams x ${SCALE.sseChunks}`;
      const createLabel = `POST ${CHATS}/{chatId}/messages (agent, streaming, SSE)`;
      const chunkLabel = `POST ${MESSAGES}/{messageId}/chunks (SSE: ${who}, 1 client)`;
      const completeLabel = `POST ${MESSAGES}/{messageId}/complete (SSE)`;
      const streamLabel = `GET ${STREAM}?ephemeral=true (chunks)`;
      const started: ({ chatId: string; messageId: string } | undefined)[] = [];
      await phase(`SSE chunks: ${SCALE.sseStreams} chats, streaming messages`, () =>
        inPool(
          Array.from({ length: SCALE.sseStreams }, (_, i) => i),
          concurrency,
          async (i) => {
            const chatId = await newChat(SCALE.sseChats + i);
            if (!chatId) return;
            const body = { role: 'agent', senderId: agentIds[(SCALE.sseChats + i) % agentIds.length], streaming: true };
            const res = await client.request<{ id: string }>(createLabel, 'POST', `${CHATS}/${chatId}/messages`, {
              body,
              expect: 201,
            });
            if (res.body?.id) started[i] = { chatId, messageId: res.body.id };
          },
        ),
      );
      const messages = started.filter((m) => m !== undefined);
      const s = messages.length > 0 ? await connect(`${baseUrl}${STREAM}?ephemeral=true`, streamLabel) : undefined;
      if (s) {
        const sentAt: number[][] = messages.map(() => []);
        let sent = 0;
        const timing = await phase(`SSE chunks: ${who} chunks`, () =>
          Promise.all(
            messages.map(async ({ messageId }, m) => {
              for (let i = 0; i < SCALE.sseChunks; i++) {
                const res = await client.request(chunkLabel, 'POST', `${MESSAGES}/${messageId}/chunks`, {
                  body: { deltaText: chunkText(i, SCALE.chunkBytes) },
                });
                const at = performance.now();
                if (res.status === 200) {
                  sentAt[m]![i] = at;
                  sent += 1;
                }
              }
            }),
          ).then(() => undefined),
        );
        const byChat = new Map(messages.map((msg, m) => [msg.chatId, m]));
        const ours = () =>
          s.events.filter((e) => e.event === 'message.streaming.chunk' && byChat.has(String(e.data.payload.chatId)));
        await phase('SSE chunks: last events', async () => void (await s.waitFor(() => ours().length >= sent, 10_000)));
        s.close();
        parseErrors(s, streamLabel);

        const seen = messages.map(() => new Set<number>());
        const highest = messages.map(() => -1);
        const values: number[] = [];
        let duplicates = 0;
        let orderViolations = 0;
        let strays = 0;
        const events = ours();
        for (const e of events) {
          const m = byChat.get(String(e.data.payload.chatId))!;
          const i = chunkNumber(e.data.payload.deltaText);
          if (i === undefined || e.data.payload.messageId !== messages[m]!.messageId || sentAt[m]![i] === undefined) {
            strays += 1;
            continue;
          }
          if (seen[m]!.has(i)) {
            duplicates += 1;
            continue;
          }
          seen[m]!.add(i);
          if (i < highest[m]!) orderViolations += 1;
          highest[m] = Math.max(highest[m]!, i);
          values.push(e.at - sentAt[m]![i]!);
        }
        const missing = sent - values.length;
        report.chunks = {
          streams: messages.length,
          chunksPerStream: SCALE.sseChunks,
          chunkBytes: SCALE.chunkBytes,
          sent,
          received: events.length,
          missing,
          duplicates,
          orderViolations,
          latencyMs: latency(values),
          wallMs: timing.ms,
        };
        if (missing > 0) fail(streamLabel, `${missing} of ${sent} chunk events never arrived`);
        if (duplicates > 0) fail(streamLabel, `${duplicates} chunk event(s) arrived twice`);
        if (orderViolations > 0)
          fail(streamLabel, `${orderViolations} chunk event(s) arrived after a later chunk of their message`);
        if (strays > 0) fail(streamLabel, `${strays} chunk event(s) matched no chunk sent (wrong message id or text)`);
      }
      await phase(`SSE chunks: complete`, () =>
        Promise.all(
          messages.map(
            async ({ messageId }) =>
              void (await client.request(completeLabel, 'POST', `${MESSAGES}/${messageId}/complete`)),
          ),
        ).then(() => undefined),
      );
    }

    // 3. Idle cost, on a second server whose streams end after sseIdleMs (see the note above).
    {
      let url: string | undefined;
      await phase('SSE idle: start a second server', async () => {
        // No warm window (SSE_WARM_MS=0): a new connection's first 6 s of 200 ms polls are a reconnect's
        // cost (the cost model's SSE.reconnectRru), not idle polling; measured here they would be
        // spread over every idle minute (a 30 s connection: ~140 calls instead of ~80).
        idleServer = await startChildServer('the idle-phase server', {
          SSE_LIFETIME_MS: String(SCALE.sseIdleMs),
          SSE_WARM_MS: '0',
        });
        url = idleServer.url;
      });
      await phase(`SSE idle: 2 connections, ${SCALE.sseIdleMs / 1000} s`, async () => {
        const kinds = [true, false].map((ephemeral) => ({
          ephemeral,
          name: `ephemeral=${ephemeral}`,
          label: `GET ${STREAM}?ephemeral=${ephemeral} (idle)`,
        }));
        const streams = await Promise.all(
          kinds.map((k) => connect(`${url}${STREAM}?ephemeral=${k.ephemeral}`, k.label)),
        );
        await Promise.all(streams.map((s) => s && Promise.race([s.ended, sleep(SCALE.sseIdleMs + 15_000)])));
        kinds.forEach((k, i) => {
          const s = streams[i];
          if (!s) return;
          s.close();
          parseErrors(s, k.label);
          const usage = s.usage();
          if (!usage)
            return void fail(
              k.label,
              `no ": usage" comment by ${(SCALE.sseIdleMs + 15_000) / 1000} s (is EXPOSE_USAGE_HEADERS=1?)`,
            );
          const perMinute = 60_000 / Math.max(1, usage.ms);
          if (s.events.length > 0)
            log(
              `  warning: the idle ${k.name} connection received ${s.events.length} event(s); its cost is not an ` +
                `idle one`,
            );
          report.idle.push({
            name: k.name,
            ephemeral: k.ephemeral,
            lifetimeMs: SCALE.sseIdleMs,
            ms: usage.ms,
            calls: usage.calls,
            rcu: usage.rcu,
            wcu: usage.wcu,
            callsPerMinute: usage.calls * perMinute,
            rcuPerMinute: usage.rcu * perMinute,
            wcuPerMinute: usage.wcu * perMinute,
            events: s.events.length,
          });
        });
      });
    }
  } finally {
    for (const s of opened) s.close();
    await idleServer?.stop();
  }

  return {
    samples: client.samples,
    failures: client.failures,
    missingUsage: [...client.missingUsage],
    phases,
    sse: report,
  };
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
const latencyCells = (l: Latency) => [f1(l.min), f1(l.p50), f1(l.p95), f1(l.p99), f1(l.max)];
const LATENCY_HEADER = ['min ms', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'];

/** The SSE section: delivery latency, chunk delivery, idle cost. */
export function sseTables(report: SseReport): string {
  const parts: string[] = [];
  parts.push(
    textTable(
      [
        'SSE delivery: write response → event at client',
        'clients',
        'writes',
        'events',
        'missed',
        'extra',
        ...LATENCY_HEADER,
      ],
      report.delivery.map((r) => [
        r.name,
        String(r.clients),
        String(r.writes),
        String(r.received),
        String(r.missed),
        String(r.extra),
        ...latencyCells(r.latencyMs),
      ]),
    ),
  );
  const idleValues = report.delivery.filter((r) => r.valuesMs);
  if (idleValues.length > 0) {
    parts.push(
      idleValues
        .map(
          (r) =>
            `after idle, ${r.clients} client${r.clients === 1 ? '' : 's'} (ms): ` +
            `${r.valuesMs!.map((v) => v.toFixed(0)).join(' ')}`,
        )
        .join('\n'),
    );
  }
  const c = report.chunks;
  if (c) {
    parts.push(
      textTable(
        [
          'SSE chunk delivery: chunk response → chunk event',
          'sent',
          'received',
          'missing',
          'dup',
          'order viol.',
          ...LATENCY_HEADER,
        ],
        [
          [
            `${c.streams} streams x ${c.chunksPerStream} chunks of ${c.chunkBytes} B, 1 client`,
            String(c.sent),
            String(c.received),
            String(c.missing),
            String(c.duplicates),
            String(c.orderViolations),
            ...latencyCells(c.latencyMs),
          ],
        ],
      ),
    );
  }
  if (report.idle.length > 0) {
    parts.push(
      textTable(
        [
          'SSE idle connection (nothing written)',
          'open s',
          'events',
          'calls',
          'RCU',
          'WCU',
          'calls/min',
          'RCU/min',
          'WCU/min',
        ],
        report.idle.map((r) => [
          r.name,
          (r.ms / 1000).toFixed(1),
          String(r.events),
          String(r.calls),
          f2(r.rcu),
          f2(r.wcu),
          f1(r.callsPerMinute),
          f2(r.rcuPerMinute),
          f2(r.wcuPerMinute),
        ]),
      ),
    );
  }
  return parts.join('\n\n');
}
