/**
 * The benchmark's search part (issue 14), on the bench's local runtime (its search index tail
 * on, as npm start runs it):
 * - a corpus of generated messages with a realistic vocabulary (200 common English words and
 *   3,000 rarer made-up words, drawn with a Zipf law), 10 to 80 words each, in 50 chats: the
 *   messages' pointer items are written to the table and their events handed to the index
 *   writer (core/search.ts indexEvents) in batches of 100, as the stream would hand them;
 * - search latency over HTTP at 10,000 and at 100,000 messages: common, rare, two-word,
 *   phrase, prefix and unmatched queries, scope messages and all, warm; and the first search
 *   of a new container (empty segment cache);
 * - freshness: from a message's POST response to its being found by GET /search (the tail
 *   polls every 200 ms, then writes a segment);
 * - write cost: DynamoDB calls and capacity per indexed message, for batches of 1 and of 100.
 */
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { StoredEvent } from '../../functions/store/events-repo.js';
import { percentile, textTable } from './stats.js';
import { seeded } from '../support/random.js';

const STAGES = [10_000, 100_000];
const CHAT_COUNT = 50;
const BATCH = 100;
const RUNS_PER_QUERY = 10;
const FRESHNESS_SAMPLES = 30;

export interface SearchReport {
  stages: {
    messages: number;
    indexSeconds: number;
    segments: number;
    indexMb: number;
    warm: { p50: number; p99: number; byQuery: Record<string, { p50: number; p99: number; hits: number }> };
    coldFirstSearchMs: number;
  }[];
  freshnessMs: { p50: number; p99: number; max: number };
  writeCost: Record<string, { calls: number; rcu: number; wcu: number }>;
}

const COMMON = (
  'the be to of and a in that have it for not on with he as you do at this but his by from they we say her she ' +
  'or an will my one all would there their what so up out if about who get which go me when make can like time no ' +
  'just him know take people into year your good some could them see other than then now look only come its over ' +
  'think also back after use two how our work first well way even new want because any these give day most us ' +
  'deploy build release plan server database error test code review merge branch issue fix update config user ' +
  'message chat agent model request response latency cost storage index query search result page cursor limit ' +
  'report summary meeting draft note task project team budget schedule invoice customer order payment account ' +
  'login password token session cache queue worker batch retry timeout stream chunk event webhook push device'
).split(' ');

function vocabulary(random: () => number): string[] {
  const syllables = ['ka', 'lo', 'mi', 'ren', 'sta', 'vo', 'ti', 'zan', 'qua', 'bel', 'dor', 'fi', 'gra', 'hul', 'nex'];
  const rare = new Set<string>();
  while (rare.size < 3000) {
    let w = '';
    const n = 2 + Math.floor(random() * 3);
    for (let i = 0; i < n; i++) w += syllables[Math.floor(random() * syllables.length)];
    rare.add(w);
  }
  return [...COMMON, ...rare];
}

/** Draws word ranks with P(rank r) ∝ 1 / (r + 1)^1.07. */
function zipf(size: number, random: () => number): () => number {
  const weights = Array.from({ length: size }, (_, r) => 1 / (r + 1) ** 1.07);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const w of weights) cumulative.push((sum += w / total));
  return () => {
    const x = random();
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const newMessageId = () => randomBytes(16).toString('base64url').slice(0, 21);

export async function runSearchScenarios(url: string, log: (line: string) => void): Promise<{ search: SearchReport }> {
  const Search = await import('../../functions/core/search.js');
  const { Keys } = await import('../../functions/store/keys.js');
  const { withUsage } = await import('../../functions/platform/usage.js');
  const { cacheDir } = await import('../../functions/platform/search-storage.js');
  const db = DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT }));
  const table = process.env.TABLE_NAME!;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as { id: string; created_at: string };
  };
  const search = async (q: string, scope: string) => {
    const started = performance.now();
    const res = await fetch(`${url}/api/v1/search?${new URLSearchParams({ q, scope, limit: '50' })}`);
    const body = (await res.json()) as { messages: { id: string }[]; chats: unknown[] };
    if (res.status !== 200) throw new Error(`search ${q}: ${res.status}`);
    return { ms: performance.now() - started, body };
  };

  const random = seeded(7);
  const words = vocabulary(random);
  const draw = zipf(words.length, random);
  const chats: string[] = [];
  for (let i = 0; i < CHAT_COUNT; i++) {
    chats.push((await post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-fast', title: `c${i}` })).id);
  }
  const sentence = () => Array.from({ length: 10 + Math.floor(random() * 71) }, () => words[draw()]).join(' ');
  let phrase = '';
  let seq = 0;
  let loaded = 0;
  const baseMs = Date.now() - 200 * 24 * 3600_000;

  async function load(upTo: number): Promise<number> {
    const started = performance.now();
    while (loaded < upTo) {
      const events: StoredEvent[] = [];
      const pointers: Record<string, unknown>[] = [];
      for (let i = 0; i < BATCH && loaded < upTo; i++, loaded++) {
        const id = newMessageId();
        const chatId = chats[loaded % CHAT_COUNT]!;
        const createdAt = new Date(baseMs + loaded * 150).toISOString();
        const text = sentence();
        if (loaded === 1234) phrase = text.split(' ').slice(3, 5).join(' ');
        pointers.push({
          ...Keys.messagePointer(id),
          type: 'message-pointer',
          chat_id: chatId,
          message_sk: Keys.message(chatId, createdAt, id).sk,
        });
        seq += 1;
        events.push({
          seq,
          id: `bench${seq}`,
          type: 'message.created',
          timestamp: createdAt,
          payload: {
            chatId,
            messageId: id,
            role: 'agent',
            senderId: 'assistant',
            streamState: 'complete',
            contentFinal: text,
            createdAt,
            trace: null,
          },
        });
      }
      for (let i = 0; i < pointers.length; i += 25) {
        let items: Record<string, unknown>[] | undefined = pointers
          .slice(i, i + 25)
          .map((Item) => ({ PutRequest: { Item } }));
        while (items && items.length > 0) {
          const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: items as never } }));
          items = out.UnprocessedItems?.[table] as Record<string, unknown>[] | undefined;
        }
      }
      await Search.indexEvents(events);
      if (loaded % 10_000 === 0) log(`  search: ${loaded} messages indexed`);
    }
    return (performance.now() - started) / 1000;
  }

  const queries = (): Record<string, string> => ({
    common: words[0]!,
    'two common': `${words[3]} ${words[12]}`,
    rare: words[COMMON.length + 2000]!,
    'common + rare': `${words[1]} ${words[COMMON.length + 50]}`,
    phrase: `"${phrase}"`,
    prefix: words[COMMON.length + 10]!.slice(0, 3),
    unmatched: 'zzqxjv',
  });

  const stages: SearchReport['stages'] = [];
  for (const size of STAGES) {
    log(`  search: loading ${size} messages...`);
    const indexSeconds = await load(size);
    const manifest = await Search.indexManifest();
    // A new container: no open segment, no local copy.
    Search.forgetReadersForTests();
    rmSync(cacheDir(), { recursive: true, force: true });
    const cold = await search(words[5]!, 'messages');
    const all: number[] = [];
    const byQuery: SearchReport['stages'][number]['warm']['byQuery'] = {};
    for (const [name, q] of Object.entries(queries())) {
      for (const scope of ['messages', 'all']) {
        const times: number[] = [];
        let hits = 0;
        await search(q, scope);
        for (let i = 0; i < RUNS_PER_QUERY; i++) {
          const r = await search(q, scope);
          times.push(r.ms);
          hits = r.body.messages.length + r.body.chats.length;
        }
        times.sort((a, b) => a - b);
        all.push(...times);
        byQuery[`${name} (${scope})`] = { p50: percentile(times, 50), p99: percentile(times, 99), hits };
      }
    }
    all.sort((a, b) => a - b);
    stages.push({
      messages: size,
      indexSeconds,
      segments: manifest.segments.length,
      indexMb: manifest.segments.reduce((n, s) => n + s.bytes, 0) / 1e6,
      warm: { p50: percentile(all, 50), p99: percentile(all, 99), byQuery },
      coldFirstSearchMs: cold.ms,
    });
  }

  log('  search: freshness (message response → found by GET /search)...');
  const fresh: number[] = [];
  for (let i = 0; i < FRESHNESS_SAMPLES; i++) {
    const token = `fresh${i}x${randomBytes(4).toString('hex')}`;
    const msg = await post(`/api/v1/chats/${chats[i % CHAT_COUNT]}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: `note ${token} done`,
    });
    const started = performance.now();
    for (;;) {
      const r = await search(token, 'messages');
      if (r.body.messages.some((m) => m.id === msg.id)) break;
      if (performance.now() - started > 30_000) throw new Error(`message ${msg.id} not searchable after 30 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    fresh.push(performance.now() - started);
  }
  fresh.sort((a, b) => a - b);

  const writeCost: SearchReport['writeCost'] = {};
  for (const size of [1, BATCH]) {
    let calls = 0;
    let rcu = 0;
    let wcu = 0;
    const rounds = size === 1 ? 20 : 3;
    for (let r = 0; r < rounds; r++) {
      const events: StoredEvent[] = Array.from({ length: size }, () => {
        seq += 1;
        const createdAt = new Date().toISOString();
        return {
          seq,
          id: `cost${seq}`,
          type: 'message.created',
          timestamp: createdAt,
          // The whole payload, as the service writes it: indexEvents reads it through the event catalog.
          payload: {
            chatId: chats[0],
            messageId: newMessageId(),
            role: 'agent',
            senderId: 'assistant',
            streamState: 'complete',
            contentFinal: sentence(),
            createdAt,
            trace: null,
          },
        };
      });
      const { usage, result } = withUsage(() => Search.indexEvents(events));
      await result;
      calls += usage.calls;
      rcu += usage.readUnits;
      wcu += usage.writeUnits;
    }
    const n = rounds * size;
    writeCost[`batches of ${size}`] = { calls: calls / n, rcu: rcu / n, wcu: wcu / n };
  }

  return {
    search: {
      stages,
      freshnessMs: { p50: percentile(fresh, 50), p99: percentile(fresh, 99), max: fresh.at(-1)! },
      writeCost,
    },
  };
}

export function searchTables(report: SearchReport): string {
  const f = (n: number) => n.toFixed(1);
  const stageRows = report.stages.map((s) => [
    String(s.messages),
    f(s.indexSeconds),
    String(s.segments),
    f(s.indexMb),
    f(s.warm.p50),
    f(s.warm.p99),
    f(s.coldFirstSearchMs),
  ]);
  const queries = Object.keys(report.stages[0]?.warm.byQuery ?? {});
  const queryRows = queries.map((q) => [
    q,
    ...report.stages.flatMap((s) => [
      f(s.warm.byQuery[q]!.p50),
      f(s.warm.byQuery[q]!.p99),
      String(s.warm.byQuery[q]!.hits),
    ]),
  ]);
  const costRows = Object.entries(report.writeCost).map(([k, c]) => [
    k,
    c.calls.toFixed(2),
    c.rcu.toFixed(2),
    c.wcu.toFixed(2),
  ]);
  return [
    textTable(['messages', 'index s', 'segments', 'index MB', 'p50 ms', 'p99 ms', 'cold first ms'], stageRows),
    '',
    textTable(['query', ...report.stages.flatMap((s) => [`${s.messages} p50`, 'p99', 'hits'])], queryRows),
    '',
    `freshness (response → searchable): p50 ${f(report.freshnessMs.p50)} ms, p99 ${f(report.freshnessMs.p99)} ms, ` +
      `max ${f(report.freshnessMs.max)} ms`,
    '',
    textTable(['index writes per message', 'calls', 'RCU', 'WCU (Local)'], costRows),
  ].join('\n');
}
