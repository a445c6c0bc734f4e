/**
 * The benchmark's message workload, after the chat workload (scenario.ts), on chats of its own:
 *
 * 1. Plain messages (user and agent, alternating, sequential within a chat, chats in
 *    parallel), typing and user-typing signals, and first pages of the message list.
 * 2. One long stream: a streaming agent message that receives `longStreamChunks` chunks of
 *    `chunkBytes` bytes one after another (~200 KB in all), then is completed. Chunk #1 and
 *    the last chunk are reported side by side: appending must not cost more as the message
 *    grows.
 * 3. Parallel streams: `parallelStreams` streaming messages, one per chat, each receiving
 *    `parallelChunks` chunks sequentially, all streams at once; then all completed.
 *
 * Every chunk response's content_partial is checked to be exactly the text sent so far, and
 * every completed message's content_final to be the whole text; a mismatch is a failure.
 */
import { BENCH_CONFIG, BenchClient, CHATS, Rng, SCALE, inPool, phaseRunner } from './scenario.js';
import type { Failure, Log, PhaseTiming, ScenarioOptions } from './scenario.js';
import { percentile, textTable } from './stats.js';
import type { Sample } from './stats.js';

const MESSAGES = '/api/v1/messages';
const kb = (bytes: number) => `${Math.round(bytes / 1000)} KB`;

const LONG = `1 stream x ${SCALE.longStreamChunks}`;
const PARALLEL = `${SCALE.parallelStreams} streams x ${SCALE.parallelChunks}`;

/** Endpoint labels of the message workload (the chunk and complete labels name their scenario). */
export const MESSAGE_LABELS = {
  chatCreate: `POST ${CHATS} (for messages)`,
  createUser: `POST ${CHATS}/{chatId}/messages (user)`,
  createAgent: `POST ${CHATS}/{chatId}/messages (agent)`,
  createStreaming: `POST ${CHATS}/{chatId}/messages (agent, streaming)`,
  list: `GET ${CHATS}/{chatId}/messages?limit=50`,
  listLong: `GET ${CHATS}/{chatId}/messages?limit=50 (${kb(SCALE.longStreamChunks * SCALE.chunkBytes)} message)`,
  typing: `POST ${CHATS}/{chatId}/typing`,
  userTyping: `POST ${CHATS}/{chatId}/user-typing`,
  chunkLong: `POST ${MESSAGES}/{messageId}/chunks (${LONG})`,
  completeLong: `POST ${MESSAGES}/{messageId}/complete (${LONG})`,
  chunkParallel: `POST ${MESSAGES}/{messageId}/chunks (${PARALLEL})`,
  completeParallel: `POST ${MESSAGES}/{messageId}/complete (${PARALLEL})`,
} as const;

/** One streaming scenario's chunk appends, as a whole. */
export interface StreamRun {
  name: string;
  streams: number;
  chunksPerStream: number;
  chunkBytes: number;
  /** Chunk appends answered 200. */
  chunks: number;
  /** From the first chunk sent to the last chunk answered (creates and completes excluded). */
  wallMs: number;
  chunksPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number };
  /** Streams whose content_final came back exactly as the concatenated chunks. */
  verified: number;
}

/** One request (or the mean of a run of requests) of the long stream, for the side-by-side table. */
export interface StreamPoint {
  what: string;
  status: string;
  ms: number;
  calls: number;
  rcu: number;
  wcu: number;
  /** Response body size. */
  bytes: number;
}

export interface StreamingReport {
  runs: StreamRun[];
  /** Long stream: chunk #1, the middle chunk, the last chunk, early and late means, complete. */
  points: StreamPoint[];
}

export interface MessageScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  streaming: StreamingReport;
}

interface ChatBody {
  id: string;
  agentIds?: string[];
}
interface MessageBody {
  id: string;
  stream_state?: string;
  content_final?: string | null;
  content_partial?: string | null;
}
interface MessagePage {
  data: MessageBody[];
  cursor: { next: string | null; hasMore: boolean };
}

const WORDS = [
  'the',
  'agent',
  'streams',
  'tokens',
  'into',
  'a',
  'message',
  'while',
  'user',
  'waits',
  'for',
  'answer',
  'latency',
  'table',
  'chunk',
  'append',
  'costs',
  'same',
  'at',
  'end',
  'as',
  'start',
  'of',
  'reply',
] as const;

/**
 * A chunk of exactly `bytes` ASCII bytes; it never starts with a space, and the last one ends the text with a
 * full stop.
 */
function chunkText(rng: Rng, bytes: number, last: boolean): string {
  let text = '';
  while (text.length < bytes) text += `${rng.pick(WORDS)} `;
  return text.slice(0, bytes - 1) + (last ? '.' : ' ');
}

/** Mean of some samples' figures, as one point. */
function meanPoint(what: string, samples: readonly Sample[]): StreamPoint {
  const mean = (f: (s: Sample) => number) => samples.reduce((n, s) => n + f(s), 0) / Math.max(1, samples.length);
  const statuses = [...new Set(samples.map((s) => s.status))].join('/');
  return {
    what,
    status: statuses,
    ms: mean((s) => s.ms),
    calls: mean((s) => s.calls),
    rcu: mean((s) => s.rcu),
    wcu: mean((s) => s.wcu),
    bytes: mean((s) => s.bytes),
  };
}

const point = (what: string, s: Sample | undefined): StreamPoint =>
  s
    ? meanPoint(what, [s])
    : { what, status: 'none', ms: Number.NaN, calls: Number.NaN, rcu: Number.NaN, wcu: Number.NaN, bytes: Number.NaN };

export async function runMessageScenarios(
  baseUrl: string,
  options: ScenarioOptions,
  log: Log,
): Promise<MessageScenarioResult> {
  const { concurrency } = options;
  // A generator of its own, so the chat workload's choices do not depend on this one.
  const rng = new Rng(options.seed + 1);
  const client = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const phase = phaseRunner([client], phases, log);
  const agentIds = BENCH_CONFIG.agents.map((a) => a.id);
  const L = MESSAGE_LABELS;

  const fail = (label: string, path: string, status: number, body: string) =>
    client.failures.push({ label, method: 'POST', path, status, body });

  const newChat = async (agentId: string): Promise<string | undefined> => {
    const body = { agentIds: [agentId], modelId: rng.pick(BENCH_CONFIG.models).id, title: `messages bench ${agentId}` };
    const { body: chat } = await client.request<ChatBody>(L.chatCreate, 'POST', CHATS, { body, expect: 201 });
    return chat?.id;
  };

  const startStream = async (chatId: string, agentId: string): Promise<string | undefined> => {
    const path = `${CHATS}/${chatId}/messages`;
    const res = await client.request<MessageBody>(L.createStreaming, 'POST', path, {
      body: { role: 'agent', senderId: agentId, streaming: true },
      expect: 201,
    });
    if (res.status === 201 && res.body?.stream_state !== 'streaming')
      fail(L.createStreaming, path, res.status, `stream_state ${res.body?.stream_state}`);
    return res.body?.id;
  };

  /**
   * Sends `count` chunks to one message, one after another, checking each accumulated
   * content_partial. Returns the text sent, and each chunk's sample in order.
   */
  const stream = async (messageId: string, label: string, count: number, words: Rng) => {
    const path = `${MESSAGES}/${messageId}/chunks`;
    const parts: string[] = [];
    const samples: Sample[] = [];
    let sentBytes = 0;
    let mismatches = 0;
    for (let i = 1; i <= count; i++) {
      const deltaText = chunkText(words, SCALE.chunkBytes, i === count);
      parts.push(deltaText);
      sentBytes += deltaText.length;
      const res = await client.request<MessageBody>(label, 'POST', path, { body: { deltaText } });
      samples.push(res.sample);
      if (res.status !== 200) continue;
      // Length on every chunk (cheap), the exact text on the last one.
      const partial = res.body?.content_partial ?? '';
      if (partial.length !== sentBytes || (i === count && partial !== parts.join(''))) {
        if (mismatches++ === 0)
          fail(
            label,
            path,
            res.status,
            `chunk #${i}: content_partial has ${partial.length} chars, ${sentBytes} were sent`,
          );
      }
    }
    return { text: parts.join(''), samples };
  };

  /** Completes a stream (no finalText: the server assembles the chunks); whether the text came back whole. */
  const complete = async (messageId: string, label: string, expected: string) => {
    const path = `${MESSAGES}/${messageId}/complete`;
    const res = await client.request<MessageBody>(label, 'POST', path);
    if (res.status !== 200) return { verified: false, sample: res.sample };
    const final = res.body?.content_final;
    if (res.body?.stream_state === 'complete' && final === expected) return { verified: true, sample: res.sample };
    fail(
      label,
      path,
      res.status,
      `stream_state ${res.body?.stream_state}, content_final ${final?.length ?? 'null'} chars, expected ` +
        `${expected.length}`,
    );
    return { verified: false, sample: res.sample };
  };

  const runStats = (
    name: string,
    streams: number,
    perStream: number,
    samples: readonly Sample[],
    wallMs: number,
    verified: number,
  ): StreamRun => {
    const ok = samples.filter((s) => s.ok);
    const ms = ok.map((s) => s.ms).sort((a, b) => a - b);
    return {
      name,
      streams,
      chunksPerStream: perStream,
      chunkBytes: SCALE.chunkBytes,
      chunks: ok.length,
      wallMs,
      chunksPerSecond: ok.length / (wallMs / 1000),
      latencyMs: {
        p50: percentile(ms, 50),
        p95: percentile(ms, 95),
        p99: percentile(ms, 99),
        max: ms.at(-1) ?? Number.NaN,
      },
      verified,
    };
  };

  const runs: StreamRun[] = [];
  const points: StreamPoint[] = [];

  // 1. Plain messages, typing, lists.
  const slots: ({ id: string; agentId: string } | undefined)[] = [];
  await phase('message chats', () =>
    inPool(
      Array.from({ length: SCALE.messageChats }, (_, i) => agentIds[i % agentIds.length]!),
      concurrency,
      async (agentId, i) => {
        const id = await newChat(agentId);
        if (id) slots[i] = { id, agentId };
      },
    ),
  );
  const chats = slots.filter((c) => c !== undefined);
  // Contents drawn up front: the draws must not depend on how the concurrent chats interleave.
  const contents = chats.map(() =>
    Array.from(
      { length: SCALE.messagesPerChat },
      (_, i) => `${rng.pick(WORDS)} ${rng.pick(WORDS)} ${rng.pick(WORDS)} (${i})`,
    ),
  );
  await phase('messages (user + agent)', () =>
    inPool(chats, concurrency, async ({ id, agentId }, c) => {
      for (let i = 0; i < SCALE.messagesPerChat; i++) {
        const content = contents[c]![i]!;
        if (i % 2 === 0) {
          await client.request(L.createUser, 'POST', `${CHATS}/${id}/messages`, {
            body: { role: 'user', content },
            expect: 201,
          });
        } else {
          await client.request(L.createAgent, 'POST', `${CHATS}/${id}/messages`, {
            body: { role: 'agent', senderId: agentId, content },
            expect: 201,
          });
        }
      }
    }),
  );
  const signals =
    chats.length === 0
      ? []
      : Array.from({ length: SCALE.typing * 2 }, (_, i) => ({ chat: rng.pick(chats), agent: i % 2 === 0 }));
  await phase('typing, user-typing', () =>
    inPool(signals, concurrency, async ({ chat, agent }) => {
      if (agent)
        await client.request(L.typing, 'POST', `${CHATS}/${chat.id}/typing`, {
          body: { agentId: chat.agentId },
          expect: 204,
        });
      else await client.request(L.userTyping, 'POST', `${CHATS}/${chat.id}/user-typing`, { expect: 204 });
    }),
  );
  const lists = chats.length === 0 ? [] : Array.from({ length: SCALE.messageLists }, () => rng.pick(chats));
  const expectedRows = Math.min(50, SCALE.messagesPerChat);
  await phase('message lists', () =>
    inPool(lists, concurrency, async ({ id }) => {
      const path = `${CHATS}/${id}/messages?limit=50`;
      const res = await client.request<MessagePage>(L.list, 'GET', path);
      if (res.status === 200 && res.body?.data.length !== expectedRows)
        fail(L.list, path, res.status, `${res.body?.data.length} rows, expected ${expectedRows}`);
    }),
  );

  // 2. One long stream, chunk after chunk.
  {
    const agentId = agentIds[0]!;
    let messageId: string | undefined;
    let chatId: string | undefined;
    await phase('long stream: chat, message', async () => {
      chatId = await newChat(agentId);
      if (chatId) messageId = await startStream(chatId, agentId);
    });
    let sent: Awaited<ReturnType<typeof stream>> | undefined;
    const timing = await phase(`long stream: ${SCALE.longStreamChunks} chunks`, async () => {
      if (messageId) sent = await stream(messageId, L.chunkLong, SCALE.longStreamChunks, new Rng(options.seed + 2));
    });
    let verified = 0;
    let completeSample: Sample | undefined;
    await phase('long stream: complete, list', async () => {
      if (!messageId || !sent || !chatId) return;
      const done = await complete(messageId, L.completeLong, sent.text);
      if (done.verified) verified = 1;
      completeSample = done.sample;
      for (let r = 0; r < 5; r++) {
        const path = `${CHATS}/${chatId}/messages?limit=50`;
        const res = await client.request<MessagePage>(L.listLong, 'GET', path);
        const found = res.body?.data.find((m) => m.id === messageId);
        if (res.status === 200 && found?.content_final?.length !== sent.text.length)
          fail(L.listLong, path, res.status, `the long message lists with ${found?.content_final?.length} chars`);
      }
    });
    const samples = sent?.samples ?? [];
    runs.push(
      runStats(
        `${LONG} chunks of ${SCALE.chunkBytes} B, sequential`,
        1,
        SCALE.longStreamChunks,
        samples,
        timing.ms,
        verified,
      ),
    );
    const n = samples.length;
    const slice = Math.max(1, Math.min(100, Math.floor(n / 10)));
    const mid = Math.ceil(n / 2);
    points.push(
      point('chunk #1', samples[0]),
      point(`chunk #${mid}`, samples[mid - 1]),
      point(`chunk #${n}`, samples[n - 1]),
      meanPoint(`chunks #1-${slice} (mean)`, samples.slice(0, slice)),
      meanPoint(`chunks #${n - slice + 1}-${n} (mean)`, samples.slice(n - slice)),
      point(`complete (${kb(sent?.text.length ?? 0)}, from ${n} chunks)`, completeSample),
    );
  }

  // 3. Parallel streams: one per chat, sequential within a stream, all streams at once.
  {
    const started: ({ chatId: string; messageId: string } | undefined)[] = [];
    await phase(`${SCALE.parallelStreams} streams: chats, messages`, () =>
      inPool(
        Array.from({ length: SCALE.parallelStreams }, (_, i) => agentIds[i % agentIds.length]!),
        concurrency,
        async (agentId, i) => {
          const chatId = await newChat(agentId);
          const messageId = chatId ? await startStream(chatId, agentId) : undefined;
          if (chatId && messageId) started[i] = { chatId, messageId };
        },
      ),
    );
    const streams = started.filter((s) => s !== undefined);
    const texts = new Map<string, string>();
    const samples: Sample[] = [];
    const timing = await phase(`${SCALE.parallelStreams} streams: ${SCALE.parallelChunks} chunks each`, async () => {
      await Promise.all(
        streams.map(async ({ messageId }, i) => {
          const sent = await stream(messageId, L.chunkParallel, SCALE.parallelChunks, new Rng(options.seed + 3 + i));
          texts.set(messageId, sent.text);
          samples.push(...sent.samples);
        }),
      );
    });
    let verified = 0;
    await phase(`${SCALE.parallelStreams} streams: complete`, () =>
      Promise.all(
        streams.map(async ({ messageId }) => {
          if ((await complete(messageId, L.completeParallel, texts.get(messageId) ?? '')).verified) verified += 1;
        }),
      ).then(() => undefined),
    );
    runs.push(
      runStats(
        `${PARALLEL} chunks of ${SCALE.chunkBytes} B, streams in parallel`,
        SCALE.parallelStreams,
        SCALE.parallelChunks,
        samples,
        timing.ms,
        verified,
      ),
    );
  }

  return {
    samples: client.samples,
    failures: client.failures,
    missingUsage: [...client.missingUsage],
    phases,
    streaming: { runs, points },
  };
}

const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** The streaming section: throughput per scenario, then the long stream's first-versus-last chunk costs. */
export function streamingTables(report: StreamingReport): string {
  const runHeader = [
    'streaming scenario',
    'chunks',
    'wall s',
    'chunks/s',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    'verified',
  ];
  const runRows = report.runs.map((r) => [
    r.name,
    String(r.chunks),
    (r.wallMs / 1000).toFixed(1),
    r.chunksPerSecond.toFixed(1),
    f1(r.latencyMs.p50),
    f1(r.latencyMs.p95),
    f1(r.latencyMs.p99),
    f1(r.latencyMs.max),
    `${r.verified}/${r.streams}`,
  ]);
  const pointHeader = ['long stream: chunk #1 vs last chunk', 'status', 'ms', 'calls', 'RCU', 'WCU', 'response bytes'];
  const pointRows = report.points.map((p) => [
    p.what,
    p.status,
    f1(p.ms),
    f2(p.calls),
    f2(p.rcu),
    f2(p.wcu),
    Number.isFinite(p.bytes) ? String(Math.round(p.bytes)) : '-',
  ]);
  return `${textTable(runHeader, runRows)}\n\n${textTable(pointHeader, pointRows)}`;
}
