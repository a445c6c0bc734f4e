/**
 * The benchmark's fixed workload, played over real HTTP against the local runtime. Every
 * choice comes from a seeded generator, so two runs send the same requests in the same order
 * (server-generated ids and timestamps aside; concurrent requests may interleave differently).
 */
import type { Sample } from './stats.js';
import { seeded } from '../support/random.js';

/** The instance configuration the benchmark runs with: 3 agents, 2 models. */
export const BENCH_CONFIG = {
  agents: [
    { id: 'assistant', name: 'Assistant', description: 'General help.', defaultModelId: 'model-fast' },
    { id: 'coder', name: 'Coder', description: 'Writes code.', defaultModelId: 'model-smart' },
    { id: 'researcher', name: 'Researcher', description: 'Finds things out.' },
  ],
  models: [
    { id: 'model-fast', name: 'Fast', description: 'Quick answers.' },
    { id: 'model-smart', name: 'Smart', description: 'Careful answers.' },
  ],
};

export const SCALE = {
  chats: 1000,
  /** Chats are created in this many equal batches, with growth probes after each. */
  createBatches: 4,
  pageLimit: 50,
  archive: 100,
  markUnread: 100,
  markRead: 50,
  patch: 200,
  get: 200,
  summaries: 50,
  suggestions: 100,
  healthAndConfig: 50,
  idempotent: 50,
  /** Requests per growth probe endpoint at each data size. */
  probeRepeats: 5,
  // Messages (messages.ts).
  /** Chats that receive plain messages, and user + agent messages per chat (alternating). */
  messageChats: 8,
  messagesPerChat: 60,
  /** GET …/messages?limit=50 requests over those chats. */
  messageLists: 100,
  /** Agent typing and user-typing signals, each. */
  typing: 100,
  /** One message streamed in `longStreamChunks` sequential chunks of `chunkBytes` bytes. */
  longStreamChunks: 2000,
  chunkBytes: 100,
  /** Concurrent streams (one chat each), `parallelChunks` sequential chunks in each. */
  parallelStreams: 20,
  parallelChunks: 100,
  // Server-sent events (events.ts).
  /** Delivery runs: `sseWrites` mark-read writes, one at a time `sseWritePauseMs` apart, over `sseChats` chats. */
  sseWrites: 100,
  sseWritePauseMs: 50,
  sseChats: 20,
  /** Connected clients in the second delivery run (the first has 1). */
  sseClients: 10,
  /** Per delivery run, writes that each follow `sseIdlePauseMs` of silence (the server's poll has backed off). */
  sseIdleWrites: 3,
  sseIdlePauseMs: 3000,
  /** Chunk delivery: streaming messages (one chat each) and chunks per message, one client connected. */
  sseStreams: 20,
  sseChunks: 50,
  /** Idle cost: how long the idle connections stay open (the second server's SSE_LIFETIME_MS). */
  sseIdleMs: 30_000,
  // Dispatch (dispatch.ts), on a second server in batched_sequential mode (600 ms debounce).
  /** Workers looping on claim (long-polling `dispatchClaimWaitMs`) and completing each batch at once. */
  dispatchWorkers: 4,
  dispatchClaimWaitMs: 20_000,
  /**
   * Input → claimable, user messages one at a time per chat (each its own batch): first one chat
   * alone sends `dispatchSoloMessages`, then `dispatchLatencyChats` others at once send
   * `dispatchLatencyMessages` each.
   */
  dispatchSoloMessages: 10,
  dispatchLatencyChats: 20,
  dispatchLatencyMessages: 5,
  /** Before each of those messages a chat waits a seeded pause in [0, this) ms (its previous batch completed). */
  dispatchLatencyPauseMs: 400,
  /** Throughput: `dispatchBacklogRounds` rounds of one user message per chat, each round sealed before the next. */
  dispatchBacklogChats: 50,
  dispatchBacklogRounds: 4,
};

/** ~30 tag names sharing prefixes (pro-, re-, de-...), so suggestion prefixes match several. */
const TAGS = [
  'project-alpha',
  'project-beta',
  'project-gamma',
  'prod',
  'prototype',
  'research',
  'review',
  'release',
  'refactor',
  'design',
  'deploy',
  'debug',
  'docs',
  'bug',
  'backend',
  'billing',
  'frontend',
  'finance',
  'feature',
  'infra',
  'incident',
  'idea',
  'meeting',
  'marketing',
  'urgent',
  'ux',
  'security',
  'sales',
  'support',
  'travel',
] as const;

const TITLE_WORDS = [
  'budget',
  'deploy',
  'invoice',
  'roadmap',
  'migration',
  'lambda',
  'dynamo',
  'design',
  'review',
  'onboarding',
  'incident',
  'pricing',
  'analytics',
  'search',
  'latency',
  'refund',
  'hiring',
  'launch',
  'sprint',
  'security',
] as const;

/** Prefixes for tag suggestions: one to four letters, some matching nothing. */
const SUGGESTION_PREFIXES = [
  'p',
  'pr',
  'pro',
  'proj',
  're',
  'rev',
  'd',
  'de',
  'dep',
  'b',
  'bi',
  'f',
  'fi',
  'i',
  'in',
  'm',
  'u',
  's',
  'su',
  't',
  'x',
  'zz',
  'PRO',
  'De',
] as const;

/** mulberry32: a small, fast, seeded PRNG (uniform in [0, 1)). */
export class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = seeded(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error('pick() from an empty list');
    return item;
  }
  /** `k` distinct items, in random order. */
  sample<T>(items: readonly T[], k: number): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy.slice(0, k);
  }
}

export interface Failure {
  label: string;
  method: string;
  path: string;
  status: number;
  body: string;
}

interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Expected status, or statuses; anything else is recorded as a failure. Default 200. */
  expect?: number | readonly number[];
}

/** fetch with timing and x-ddb-* capture; every request becomes a Sample. */
export class BenchClient {
  readonly samples: Sample[] = [];
  readonly failures: Failure[] = [];
  /** Labels whose responses lacked the x-ddb-* headers (EXPOSE_USAGE_HEADERS not honoured). */
  readonly missingUsage = new Set<string>();

  constructor(private readonly baseUrl: string) {}

  async request<T = unknown>(
    label: string,
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<{ status: number; body: T; sample: Sample }> {
    const headers: Record<string, string> = { ...options.headers };
    let payload: string | undefined;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body: payload });
    const text = await res.text();
    const ms = performance.now() - started;

    const usage = (name: string) => {
      const value = res.headers.get(name);
      if (value === null) this.missingUsage.add(label);
      return value === null ? 0 : Number(value);
    };
    const optional = (key: 'storageMs' | 'trips' | 'serverMs' | 'cpuMs', name: string) => {
      const value = res.headers.get(name);
      return value === null ? {} : { [key]: Number(value) };
    };
    const expected = options.expect ?? 200;
    const ok = typeof expected === 'number' ? res.status === expected : expected.includes(res.status);
    const sample: Sample = {
      label,
      status: res.status,
      ok,
      ms,
      calls: usage('x-ddb-calls'),
      rcu: usage('x-ddb-rcu'),
      wcu: usage('x-ddb-wcu'),
      ...optional('storageMs', 'x-storage-ms'),
      ...optional('trips', 'x-storage-trips'),
      ...optional('serverMs', 'x-server-ms'),
      ...optional('cpuMs', 'x-cpu-ms'),
      bytes: Buffer.byteLength(text, 'utf8'),
    };
    this.samples.push(sample);
    if (!ok) {
      this.failures.push({ label, method, path, status: res.status, body: text.slice(0, 300) });
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body: body as T, sample };
  }
}

/** Runs `fn` over `items` with at most `concurrency` in flight. */
export async function inPool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

interface ChatBody {
  id: string;
  title: string;
  tags: string[];
}
interface ChatPage {
  data: ChatBody[];
  cursor: { next: string | null; hasMore: boolean };
}

export interface PhaseTiming {
  name: string;
  requests: number;
  ms: number;
}

export interface ScenarioResult {
  samples: Sample[];
  /** Growth probes, labelled `<endpoint> @ <n> chats`, kept out of the main table. */
  probes: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  /** Chats (rows) seen by each full list walk, as a sanity check. */
  walks: Record<string, { pages: number; rows: number }>;
}

/** Times a named phase: the requests `clients` made during it, logged and added to `phases`. */
export function phaseRunner(clients: readonly BenchClient[], phases: PhaseTiming[], log: (line: string) => void) {
  const count = () => clients.reduce((n, c) => n + c.samples.length, 0);
  return async (name: string, body: () => Promise<void>): Promise<PhaseTiming> => {
    const before = count();
    const started = performance.now();
    await body();
    const timing = { name, requests: count() - before, ms: performance.now() - started };
    phases.push(timing);
    log(
      `  ${name.padEnd(40)} ${String(timing.requests).padStart(5)} requests  ` +
        `${(timing.ms / 1000).toFixed(1).padStart(6)} s`,
    );
    return timing;
  };
}

export const CHATS = '/api/v1/chats';

/** A create body for chat `i`: 1–2 agents, 0–3 tags (skewed, so some are common and some rare), varied titles. */
function chatBody(rng: Rng, i: number): Record<string, unknown> {
  const agentIds = rng.chance(0.2)
    ? rng.sample(
        BENCH_CONFIG.agents.map((a) => a.id),
        2,
      )
    : [rng.pick(BENCH_CONFIG.agents).id];
  const tagCount = rng.int(4);
  const tags = new Set<string>();
  // Squaring the uniform draw skews toward the front of the list: 'project-alpha' is common, 'travel' rare.
  while (tags.size < tagCount) tags.add(TAGS[Math.floor(rng.next() ** 2 * TAGS.length)]!);
  const title = `${rng.pick(TITLE_WORDS)} ${rng.pick(TITLE_WORDS)} ${i}`;
  const message = `Can you help with the ${rng.pick(TITLE_WORDS)} ${rng.pick(TITLE_WORDS)}? (chat ${i})`;
  const shape = rng.next();
  return {
    agentIds,
    modelId: rng.pick(BENCH_CONFIG.models).id,
    ...(tags.size > 0 ? { tags: [...tags] } : {}),
    // Half titled, a third titled by their first message, some both, some "New Chat".
    ...(shape < 0.5 || (shape >= 0.8 && shape < 0.9) ? { title } : {}),
    ...(shape >= 0.5 && shape < 0.9 ? { firstMessage: message } : {}),
  };
}

/** What each scenario runner is given: the seed of its random choices and how many requests to keep in flight. */
export interface ScenarioOptions {
  seed: number;
  concurrency: number;
}

/** Where a scenario reports its progress, a line at a time. */
export type Log = (line: string) => void;

export async function runScenario(baseUrl: string, options: ScenarioOptions, log: Log): Promise<ScenarioResult> {
  const { seed, concurrency } = options;
  const rng = new Rng(seed);
  const client = new BenchClient(baseUrl);
  const probeClient = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const walks: ScenarioResult['walks'] = {};

  const phase = phaseRunner([client, probeClient], phases, log);

  const walk = async (
    label: string,
    filters: Record<string, string>,
    target: BenchClient = client,
    maxPages = Infinity,
  ) => {
    let cursor: string | null = null;
    let pages = 0;
    let rows = 0;
    do {
      const query: URLSearchParams = new URLSearchParams({
        limit: String(SCALE.pageLimit),
        ...filters,
        ...(cursor ? { cursor } : {}),
      });
      const { status, body }: { status: number; body: ChatPage | undefined } = await target.request<ChatPage>(
        label,
        'GET',
        `${CHATS}?${query}`,
      );
      if (status !== 200 || !body) break;
      pages += 1;
      rows += body.data.length;
      cursor = body.cursor.next;
    } while (cursor && pages < maxPages);
    return { pages, rows };
  };

  // The skew makes the first tag of the list common and the last one rare.
  const commonTag: (typeof TAGS)[number] = 'project-alpha';
  const rareTag: (typeof TAGS)[number] = 'travel';

  const probe = async (size: number) => {
    const at = `@ ${String(size).padStart(4)} chats`;
    for (let r = 0; r < SCALE.probeRepeats; r++) {
      await walk(`GET ${CHATS} first page ${at}`, {}, probeClient, 1);
      await walk(`GET ${CHATS}?tag=<rare> first page ${at}`, { tag: rareTag }, probeClient, 1);
      await probeClient.request(
        `GET /api/v1/tags/suggestions?q=p ${at}`,
        'GET',
        '/api/v1/tags/suggestions?q=p&limit=10',
      );
      await probeClient.request(`GET ${CHATS}/unread-summary ${at}`, 'GET', `${CHATS}/unread-summary`);
    }
  };

  // 1. Chats, in batches, probing how costs grow with the table after each batch.
  const ids: string[] = [];
  const bodies = Array.from({ length: SCALE.chats }, (_, i) => chatBody(rng, i));
  const batch = Math.ceil(SCALE.chats / SCALE.createBatches);
  for (let from = 0; from < SCALE.chats; from += batch) {
    const part = bodies.slice(from, from + batch);
    await phase(`create chats ${from + 1}-${from + part.length}`, async () => {
      await inPool(part, concurrency, async (body, i) => {
        const { body: chat } = await client.request<ChatBody>(`POST ${CHATS}`, 'POST', CHATS, { body, expect: 201 });
        if (chat?.id) ids[from + i] = chat.id;
      });
    });
    await phase(`growth probes @ ${from + part.length}`, () => probe(from + part.length));
  }
  const created = ids.filter((id): id is string => typeof id === 'string');
  if (created.length < SCALE.chats) log(`  warning: only ${created.length} of ${SCALE.chats} chats were created`);

  // 2. Changes to existing chats, each kind over its own deterministic sample of chats.
  const archived = rng.sample(created, SCALE.archive);
  await phase('archive', () =>
    inPool(
      archived,
      concurrency,
      async (id) => void (await client.request(`POST ${CHATS}/{chatId}/archive`, 'POST', `${CHATS}/${id}/archive`)),
    ),
  );
  const unread = rng.sample(created, SCALE.markUnread);
  await phase('mark-unread', () =>
    inPool(
      unread,
      concurrency,
      async (id) =>
        void (await client.request(`POST ${CHATS}/{chatId}/mark-unread`, 'POST', `${CHATS}/${id}/mark-unread`)),
    ),
  );
  // Half of the unread chats are read again, so the summaries see ~50 chats needing attention.
  const read = rng.sample(unread, SCALE.markRead);
  await phase('mark-read', () =>
    inPool(
      read,
      concurrency,
      async (id) => void (await client.request(`POST ${CHATS}/{chatId}/mark-read`, 'POST', `${CHATS}/${id}/mark-read`)),
    ),
  );
  const patches = rng.sample(created, SCALE.patch).map((id, i) => {
    const kind = i % 4; // title / tags / pinned / all three
    const body: Record<string, unknown> = {};
    if (kind === 0 || kind === 3) body.title = `${rng.pick(TITLE_WORDS)} renamed ${i}`;
    if (kind === 1 || kind === 3) body.tags = rng.sample(TAGS, 1 + rng.int(3));
    if (kind === 2 || kind === 3) body.pinned = rng.chance(0.3);
    return { id, body };
  });
  await phase('patch', () =>
    inPool(
      patches,
      concurrency,
      async ({ id, body }) =>
        void (await client.request(`PATCH ${CHATS}/{chatId}`, 'PATCH', `${CHATS}/${id}`, { body })),
    ),
  );
  const gets = Array.from({ length: SCALE.get }, () => rng.pick(created));
  await phase('get chat', () =>
    inPool(
      gets,
      concurrency,
      async (id) => void (await client.request(`GET ${CHATS}/{chatId}`, 'GET', `${CHATS}/${id}`)),
    ),
  );

  // 3. Full list walks, one variant at a time (pages of one walk are sequential by nature).
  const agent = 'researcher';
  const titleWord = 'migra';
  const variants: [string, Record<string, string>][] = [
    [`GET ${CHATS}`, {}],
    [`GET ${CHATS}?archived=false`, { archived: 'false' }],
    [`GET ${CHATS}?archived=true`, { archived: 'true' }],
    [`GET ${CHATS}?tag=<common>`, { tag: commonTag }],
    [`GET ${CHATS}?tag=<rare>`, { tag: rareTag }],
    [`GET ${CHATS}?agentId`, { agentId: agent }],
    [`GET ${CHATS}?query`, { query: titleWord }],
  ];
  await phase('list walks', async () => {
    for (const [label, filters] of variants) walks[label] = await walk(label, filters);
  });

  // 4. Summaries, suggestions, health and config, interleaved.
  const reads: [string, string][] = [];
  for (let i = 0; i < SCALE.summaries; i++) {
    reads.push([`GET ${CHATS}/unread-summary`, `${CHATS}/unread-summary${i % 2 ? '?archived=false' : ''}`]);
    reads.push([`GET ${CHATS}/pending-summary`, `${CHATS}/pending-summary${i % 2 ? '?archived=false' : ''}`]);
  }
  for (let i = 0; i < SCALE.suggestions; i++) {
    const q = rng.pick(SUGGESTION_PREFIXES);
    reads.push([
      'GET /api/v1/tags/suggestions',
      `/api/v1/tags/suggestions?q=${encodeURIComponent(q)}&limit=${rng.pick([5, 10, 50])}`,
    ]);
  }
  for (let i = 0; i < SCALE.healthAndConfig; i++) {
    reads.push(['GET /api/v1/health', '/api/v1/health']);
    reads.push(['GET /api/v1/config', '/api/v1/config']);
  }
  await phase('summaries, suggestions, health, config', () =>
    inPool(
      rng.sample(reads, reads.length),
      concurrency,
      async ([label, path]) => void (await client.request(label, 'GET', path)),
    ),
  );

  // 5. Idempotent creates, then the same requests replayed: the replay must return the same chat.
  const idem = Array.from({ length: SCALE.idempotent }, (_, i) => ({
    key: `bench-${seed}-${i}`,
    body: chatBody(rng, SCALE.chats + i),
  }));
  const firstIds: string[] = [];
  await phase('idempotent creates', () =>
    inPool(idem, concurrency, async ({ key, body }, i) => {
      const res = await client.request<ChatBody>(`POST ${CHATS} (idempotent)`, 'POST', CHATS, {
        body,
        headers: { 'Idempotency-Key': key },
        expect: 201,
      });
      if (res.body?.id) firstIds[i] = res.body.id;
    }),
  );
  await phase('idempotent replays', () =>
    inPool(idem, concurrency, async ({ key, body }, i) => {
      const label = `POST ${CHATS} (idempotent replay)`;
      const res = await client.request<ChatBody>(label, 'POST', CHATS, {
        body,
        headers: { 'Idempotency-Key': key },
        expect: 201,
      });
      if (res.status === 201 && res.body?.id !== firstIds[i]) {
        client.failures.push({
          label,
          method: 'POST',
          path: CHATS,
          status: res.status,
          body: `replay returned ${res.body?.id}, first call ${firstIds[i]}`,
        });
      }
    }),
  );

  return {
    samples: client.samples,
    probes: probeClient.samples,
    failures: [...client.failures, ...probeClient.failures],
    missingUsage: [...new Set([...client.missingUsage, ...probeClient.missingUsage])],
    phases,
    walks,
  };
}
