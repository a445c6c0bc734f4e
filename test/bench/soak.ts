/**
 * `npm run soak`: a real-client soak against a server that is already running (`npm start` as it
 * ships, persistence on), played with the request patterns of the clients that must keep working:
 * - two OpenClaw-like workers pumping `claim-many` (`waitMs` 10 s, limit 10), failing each
 *   batch's first delivery with `retryable: true` and no delay, completing the second;
 * - one plugin-like SSE reader (ephemeral events on), reconnecting with `cursor=` of the last
 *   persisted event when the stream ends;
 * - the web UI's parallel page load (messages, pending requests, media, chats) every 3 s;
 * - a user message every 1.5 s, a 100-chunk streamed agent reply every ~6 s, a choice request
 *   created and resolved every ~8 s, a PNG upload and its thumbnail every 15 s.
 *
 * At the end it waits for dispatch to drain and checks: no 5xx; every user message and every
 * resolution dispatched (completed) exactly once; every created message seen once on SSE; every
 * chunk of every streamed reply delivered to the live reader, in order; every stream's final
 * text exact. Exit code 1 when a check fails.
 *
 * Environment: SOAK_URL (default http://127.0.0.1:3000), SOAK_SECONDS (default 180),
 * SOAK_SECRET (the instance secret, when it is on).
 */
import sharp from 'sharp';
import { percentile } from './stats.js';

const BASE = (process.env.SOAK_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '') + '/api/v1';
const SECONDS = Number(process.env.SOAK_SECONDS ?? 180);
const AUTH: Record<string, string> = process.env.SOAK_SECRET
  ? { authorization: `Bearer ${process.env.SOAK_SECRET}` }
  : {};

const statuses = new Map<string, Map<number, number>>();
const latencies = new Map<string, number[]>();
const problems: string[] = [];
let stopping = false;
let stopProducers = false;

function count(op: string, status: number, ms: number): void {
  const byStatus = statuses.get(op) ?? new Map<number, number>();
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  statuses.set(op, byStatus);
  const list = latencies.get(op) ?? [];
  list.push(ms);
  latencies.set(op, list);
}

async function call(op: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const started = performance.now();
  let status = 0;
  try {
    const res = await fetch(BASE + path, {
      method,
      headers: { ...AUTH, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    status = res.status;
    const text = await res.text();
    const json = text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : null;
    if (status >= 500) problems.push(`${op}: ${status} ${text.slice(0, 200)}`);
    return { status, json };
  } catch (error) {
    problems.push(`${op}: ${(error as Error).message}`);
    return { status: 0, json: null };
  } finally {
    count(op, status, performance.now() - started);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function every(ms: number, work: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; !stopProducers; i++) {
    const started = Date.now();
    await work(i);
    await sleep(Math.max(0, ms - (Date.now() - started)));
  }
}

// --- what the clients saw ---------------------------------------------------------------------
const sentUserMessages = new Set<string>();
const resolvedRequests = new Set<string>();
const dispatched = new Map<string, number>(); // sourceId → completions
const seenBatches = new Set<string>();
const createdMessages = new Set<string>();
const sseCreated = new Map<string, number>();
const ssePersisted = new Map<string, number>();
const sseDeltas = new Map<string, string[]>();
const streams: { messageId: string; chunks: string[]; finalText: string | null }[] = [];
let sseConnections = 0;

async function sseReader(): Promise<void> {
  let cursor: string | undefined;
  while (!stopping) {
    const controller = new AbortController();
    const stop = setInterval(() => stopping && controller.abort(), 200);
    try {
      const query = `ephemeral=true${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await fetch(`${BASE}/events/stream?${query}`, { headers: AUTH, signal: controller.signal });
      if (res.status !== 200 || !res.body) {
        problems.push(`sse: ${res.status}`);
        await sleep(1000);
        continue;
      }
      sseConnections++;
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(part, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .find((l) => l.startsWith('data:'))
            ?.slice(5)
            .trim();
          if (!data) continue;
          const event = JSON.parse(data) as { id: string; type: string; payload: Record<string, any> };
          if (event.type === 'message.streaming.chunk') {
            const list = sseDeltas.get(event.payload.messageId) ?? [];
            list.push(event.payload.deltaText);
            sseDeltas.set(event.payload.messageId, list);
          } else if (event.type !== 'chat.typing' && event.type !== 'chat.user_typing') {
            cursor = event.id;
            ssePersisted.set(event.id, (ssePersisted.get(event.id) ?? 0) + 1);
            if (event.type === 'message.created')
              sseCreated.set(event.payload.messageId, (sseCreated.get(event.payload.messageId) ?? 0) + 1);
          }
        }
      }
    } catch (error) {
      if (!stopping) problems.push(`sse: ${(error as Error).message}`);
    } finally {
      clearInterval(stop);
    }
  }
}

async function pump(workerId: string): Promise<void> {
  while (!stopping) {
    const { status, json } = await call('claim-many', 'POST', '/dispatch/claim-many', {
      workerId,
      waitMs: 10_000,
      limit: 10,
    });
    if (status === 200) {
      for (const batch of json.batches as any[]) {
        if (!seenBatches.has(batch.batchId)) {
          seenBatches.add(batch.batchId);
          await call('fail', 'POST', `/dispatch/${batch.batchId}/fail`, {
            workerId,
            reason: 'soak: first delivery fails',
            retryable: true,
          });
          continue;
        }
        const done = await call('complete', 'POST', `/dispatch/${batch.batchId}/complete`, { workerId });
        if (done.status !== 204) continue;
        for (const item of batch.items as any[])
          dispatched.set(item.sourceId, (dispatched.get(item.sourceId) ?? 0) + 1);
      }
    } else if (status !== 204) {
      await sleep(1000);
    }
    await sleep(50);
  }
}

async function main(): Promise<void> {
  const config = (await call('config', 'GET', '/config')).json;
  const agentId: string = config.agents[0].id;
  const modelId: string = config.models[0].id;
  const chats: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { json } = await call('create chat', 'POST', '/chats', { agentIds: [agentId], modelId, title: `soak ${i}` });
    chats.push(json.id);
  }
  const png = (
    await sharp({ create: { width: 96, height: 64, channels: 3, background: { r: 40, g: 120, b: 200 } } })
      .png()
      .toBuffer()
  ).toString('base64');

  const reader = sseReader();
  await sleep(1500);
  const pumps = [pump('worker-a'), pump('worker-b')];
  const producers = [
    every(3000, async () => {
      const chatId = chats[0]!;
      await Promise.all([
        call('ui messages', 'GET', `/chats/${chatId}/messages?limit=50`),
        call('ui requests', 'GET', `/chats/${chatId}/requests?status=pending`),
        call('ui media', 'GET', `/chats/${chatId}/media`),
        call('ui chats', 'GET', '/chats?limit=50'),
      ]);
    }),
    every(1500, async (i) => {
      const { status, json } = await call('user message', 'POST', `/chats/${chats[i % chats.length]}/messages`, {
        role: 'user',
        content: `soak message ${i}`,
      });
      if (status !== 201) return;
      sentUserMessages.add(json.id);
      createdMessages.add(json.id);
    }),
    every(6000, async (i) => {
      const chatId = chats[(i + 1) % chats.length]!;
      const { status, json } = await call('stream start', 'POST', `/chats/${chatId}/messages`, {
        role: 'agent',
        senderId: agentId,
        streaming: true,
      });
      if (status !== 201) return;
      createdMessages.add(json.id);
      const chunks = Array.from({ length: 100 }, (_, k) => `s${i}c${k} `);
      for (const deltaText of chunks) {
        const chunk = await call('chunk', 'POST', `/messages/${json.id}/chunks`, { deltaText });
        const partial: string | undefined = chunk.json?.content_partial;
        if (chunk.status === 200 && (partial === undefined || !chunks.join('').startsWith(partial)))
          problems.push(`chunk of ${json.id}: content_partial is not a prefix of the text sent`);
      }
      const done = await call('stream complete', 'POST', `/messages/${json.id}/complete`);
      streams.push({ messageId: json.id, chunks, finalText: done.json?.content_final ?? null });
    }),
    every(8000, async (i) => {
      const chatId = chats[(i + 2) % chats.length]!;
      const { status, json } = await call('request create', 'POST', `/chats/${chatId}/requests`, {
        type: 'choice',
        title: `Pick ${i}`,
        config: {
          options: [
            { id: 'a', label: 'A' },
            { id: 'b', label: 'B' },
          ],
        },
      });
      if (status !== 201) return;
      await sleep(500);
      const done = await call('resolve', 'POST', `/requests/${json.id}/resolve`, { selectedOptionIds: ['a'] });
      if (done.status === 200) resolvedRequests.add(json.id);
    }),
    every(15_000, async (i) => {
      const chatId = chats[i % chats.length]!;
      const { status, json } = await call('upload', 'POST', `/chats/${chatId}/media`, {
        fileName: `soak-${i}.png`,
        contentType: 'image/png',
        base64Data: png,
      });
      if (status === 201) await call('thumbnail', 'GET', `/files/${json.id}/thumbnail`);
    }),
  ];

  await sleep(SECONDS * 1000);
  // Stop producing; let the pumps drain what was sent (each batch needs two deliveries).
  stopProducers = true;
  await Promise.all(producers);
  const expected = new Set([...sentUserMessages, ...resolvedRequests]);
  const drainUntil = Date.now() + 90_000;
  while (Date.now() < drainUntil && [...expected].some((id) => !dispatched.has(id))) await sleep(1000);
  await sleep(3000);
  stopping = true;
  await Promise.all([...pumps, reader]);

  // --- checks ---
  const missing = [...expected].filter((id) => !dispatched.has(id));
  const doubled = [...dispatched].filter(([, n]) => n > 1);
  if (missing.length) problems.push(`dispatch: ${missing.length} of ${expected.size} never completed`);
  if (doubled.length) problems.push(`dispatch: ${doubled.length} dispatched more than once`);
  const unseen = [...createdMessages].filter((id) => !sseCreated.has(id));
  if (unseen.length) problems.push(`sse: ${unseen.length} created messages never seen`);
  const twice = [...ssePersisted].filter(([, n]) => n > 1);
  if (twice.length) problems.push(`sse: ${twice.length} persisted events delivered twice`);
  let chunkEvents = 0;
  let chunkMissing = 0;
  for (const s of streams) {
    const got = sseDeltas.get(s.messageId) ?? [];
    chunkEvents += got.length;
    if (got.join('') !== s.chunks.join('')) chunkMissing += s.chunks.length - got.length || 1;
    if (s.finalText !== s.chunks.join(''))
      problems.push(`stream ${s.messageId}: final text differs: ${JSON.stringify(s.finalText)?.slice(0, 80)}`);
  }
  if (chunkMissing) problems.push(`sse: ${chunkMissing} chunk events missing or out of order`);

  let total = 0;
  let fives = 0;
  let non2xx = 0;
  console.log('op                 n     p50 ms   p99 ms   statuses');
  for (const [op, byStatus] of statuses) {
    const list = [...latencies.get(op)!].sort((a, b) => a - b);
    const n = list.length;
    total += n;
    for (const [s, k] of byStatus) {
      if (s >= 500 || s === 0) fives += k;
      if (s >= 300 || s === 0) non2xx += k;
    }
    const shown = [...byStatus].map(([s, k]) => `${s}×${k}`).join(' ');
    console.log(
      `${op.padEnd(18)} ${String(n).padStart(5)} ${percentile(list, 50).toFixed(1).padStart(8)} ${percentile(list, 99)
        .toFixed(1)
        .padStart(8)}   ${shown}`,
    );
  }
  console.log(
    `\n${total} requests, ${fives} × 5xx, ${non2xx} non-2xx; dispatched ${dispatched.size} of ${expected.size} ` +
      `(${sentUserMessages.size} messages, ${resolvedRequests.size} resolutions), ${doubled.length} twice; ` +
      `SSE: ${sseConnections} connection(s), ${sseCreated.size}/${createdMessages.size} created messages, ` +
      `${chunkEvents} chunk events for ${streams.length} streams × 100`,
  );
  if (problems.length) {
    console.log(`\nPROBLEMS (${problems.length}):\n- ${[...new Set(problems)].slice(0, 30).join('\n- ')}`);
    process.exitCode = 1;
  } else console.log('\nall checks passed');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
