/**
 * `npx tsx test/bench/contention.ts`: many concurrent writes to one chat (issue 17 finding 5,
 * issue 25 item 3). Boots a DynamoDB Local and the local runtime in this process, then:
 * - sustained creates: CONTENTION_WRITERS (20) clients each post CONTENTION_CREATES_EACH (100)
 *   agent messages into one chat, one after the other, and the chat's listing must hold every
 *   2xx exactly once and nothing else;
 * - bursts: gives one chat a few agent messages, then fires N concurrent `mark-read`,
 *   `PATCH {pinned}` and `PATCH {title}` calls at it (N = 100, then 50; CONTENTION_SIZES
 *   overrides, e.g. "100,50,10").
 * Per run it prints status counts, 5xx, p50/p99 latency and whether every update landed (one
 * event per 2xx, the chat's unread count right). CONTENTION_ONLY=creates|bursts runs one part.
 * DynamoDB Local keeps its data on disk, as under npm start (CONTENTION_IN_MEMORY=1: in memory,
 * much faster under contention).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamo } from '../../local/dynamo.js';
import type { LocalDynamo } from '../../local/dynamo.js';
import type { LocalApi } from '../../local/server.js';
import { ensureTable } from '../../local/table.js';
import { startBenchApi } from './local-api.js';

const TABLE_NAME = 'contention';
const sizes = (process.env.CONTENTION_SIZES ?? '100,50').split(',').map(Number);
const writers = Number(process.env.CONTENTION_WRITERS ?? 20);
const createsEach = Number(process.env.CONTENTION_CREATES_EACH ?? 100);
const only = process.env.CONTENTION_ONLY;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  let dynamo: LocalDynamo | undefined;
  let api: LocalApi | undefined;
  let cleanup: string | undefined;
  try {
    // On disk, as npm start runs it (CONTENTION_IN_MEMORY=1 for the faster in-memory DynamoDB Local).
    const dataDir = process.env.CONTENTION_IN_MEMORY ? undefined : mkdtempSync(join(tmpdir(), 'contention-'));
    cleanup = dataDir;
    dynamo = await startDynamo(dataDir ? { dataDir } : {});
    await ensureTable(dynamo.endpoint, TABLE_NAME);
    api = await startBenchApi(dynamo.endpoint, TABLE_NAME, {
      usageHeaders: false,
      local: { dispatch: false, search: false, streamTimers: false },
    });
    const base = `${api.url}/api/v1`;
    // DynamoDB calls and cancelled transactions (version races, transaction conflicts) per burst.
    const { ddb } = await import('../../functions/store/db.js');
    const tally = {
      calls: 0,
      cancelled: 0,
      conflicts: 0,
      ms: {} as Record<string, number[]>,
      // Calls the SDK sent more than once (its retries: timeouts, throttling) and errors by name.
      retried: {} as Record<string, number>,
      errors: {} as Record<string, number>,
    };
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        tally.calls++;
        const t0 = performance.now();
        const name = context.commandName ?? '?';
        try {
          const out = await next(args);
          if ((out.output.$metadata.attempts ?? 1) > 1) tally.retried[name] = (tally.retried[name] ?? 0) + 1;
          return out;
        } catch (error) {
          const failed = error as { name?: string; $metadata?: { attempts?: number } };
          if ((failed.$metadata?.attempts ?? 1) > 1) tally.retried[name] = (tally.retried[name] ?? 0) + 1;
          const key = `${name} ${failed.name ?? '?'}`;
          tally.errors[key] = (tally.errors[key] ?? 0) + 1;
          const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
          if (reasons) tally.cancelled++;
          if (reasons?.some((r) => r.Code === 'TransactionConflict')) tally.conflicts++;
          throw error;
        } finally {
          (tally.ms[name] ??= []).push(performance.now() - t0);
        }
      },
      { step: 'initialize', name: 'contention-tally' },
    );
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
    };
    // The setup's own writes, retried until they land (a loaded machine may refuse a few).
    const setUp = async (path: string, body: unknown) => {
      for (;;) {
        const res = await call('POST', path, body);
        if (res.status < 300) return res.body!;
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    const rows: string[][] = [];
    const report = (label: string, n: number, times: number[], statuses: Map<number, number>, wall: number) => {
      times.sort((a, b) => a - b);
      const fiveXx = [...statuses].filter(([s]) => s >= 500).reduce((a, [, c]) => a + c, 0);
      return [
        label,
        [...statuses].map(([s, c]) => `${c}×${s}`).join(' '),
        String(fiveXx),
        percentile(times, 50).toFixed(0),
        percentile(times, 99).toFixed(0),
        wall.toFixed(0),
        (tally.calls / n).toFixed(1),
        `${tally.cancelled} (${tally.conflicts} conflicts)`,
      ];
    };
    const printCalls = () => {
      for (const [name, list] of Object.entries(tally.ms)) {
        list.sort((a, b) => a - b);
        console.error(
          `  ${name}: ${list.length} calls, ` +
            `p50 ${percentile(list, 50).toFixed(0)} ms, p99 ${percentile(list, 99).toFixed(0)} ms, ` +
            `max ${(list.at(-1) ?? 0).toFixed(0)} ms, ${tally.retried[name] ?? 0} sent again by the SDK`,
        );
      }
      for (const [key, count] of Object.entries(tally.errors)) console.error(`  ${key}: ${count}`);
    };
    if (only !== 'bursts') {
      // Sustained creates: `writers` clients, each posting its messages one after the other.
      const chat = await setUp('/chats', { agentIds: ['assistant'], modelId: 'model-fast' });
      const times: number[] = [];
      const statuses = new Map<number, number>();
      const created: string[] = [];
      Object.assign(tally, { calls: 0, cancelled: 0, conflicts: 0, ms: {}, retried: {}, errors: {} });
      const started = performance.now();
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          for (let i = 0; i < createsEach; i++) {
            const t0 = performance.now();
            const res = await call('POST', `/chats/${chat.id}/messages`, {
              role: 'agent',
              senderId: 'assistant',
              content: `w${w} m${i}`,
            });
            times.push(performance.now() - t0);
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status === 201) created.push(String(res.body!.id));
          }
        }),
      );
      const wall = performance.now() - started;
      const listed: string[] = [];
      for (let cursor: string | undefined; ;) {
        const page = (
          await call(
            'GET',
            `/chats/${chat.id}/messages?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          )
        ).body!;
        listed.push(...(page.data as { id: string }[]).map((m) => m.id));
        if (!page.cursor.hasMore) break;
        cursor = page.cursor.next as string;
      }
      const after = (await call('GET', `/chats/${chat.id}`)).body!;
      const createdSet = new Set(created);
      const exact =
        listed.length === created.length &&
        new Set(listed).size === listed.length &&
        listed.every((id) => createdSet.has(id));
      rows.push([
        ...report(`${writers} × ${createsEach} creates`, writers * createsEach, times, statuses, wall),
        `${listed.length} listed for ${created.length} × 201 (${exact ? 'exact' : 'MISMATCH'}), unread ${after.unread_count}`,
      ]);
      console.error(rows.at(-1)!.join(' | '));
      printCalls();
    }
    for (const n of only === 'creates' ? [] : sizes) {
      for (const [label, method, suffix, body] of [
        ['mark-read', 'POST', '/mark-read', undefined],
        ['PATCH pinned', 'PATCH', '', 'pinned'],
        ['PATCH title', 'PATCH', '', 'title'],
        // The floor: one DynamoDB read each, no write.
        ['GET', 'GET', '', undefined],
      ] as const) {
        const chat = await setUp('/chats', { agentIds: ['assistant'], modelId: 'model-fast' });
        for (let i = 0; i < 3; i++) {
          await setUp(`/chats/${chat.id}/messages`, { role: 'agent', senderId: 'assistant', content: `m${i}` });
        }
        const times: number[] = [];
        const statuses = new Map<number, number>();
        Object.assign(tally, { calls: 0, cancelled: 0, conflicts: 0, ms: {}, retried: {}, errors: {} });
        const started = performance.now();
        await Promise.all(
          Array.from({ length: n }, async (_, i) => {
            const t0 = performance.now();
            const payload =
              body === 'pinned' ? { pinned: i % 2 === 0 } : body === 'title' ? { title: `title ${i}` } : undefined;
            const res = await call(method, `/chats/${chat.id}${suffix}`, payload);
            times.push(performance.now() - t0);
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }),
        );
        const wall = performance.now() - started;
        const after = (await call('GET', `/chats/${chat.id}`)).body!;
        rows.push([
          ...report(`${n} × ${label}`, n, times, statuses, wall),
          label === 'GET'
            ? ''
            : label === 'mark-read'
              ? `unread ${after.unread_count}`
              : `pinned ${after.pinned} "${after.title}"`,
        ]);
        console.error(rows.at(-1)!.join(' | '));
        printCalls();
      }
    }
    const header = [
      'burst',
      'statuses',
      '5xx',
      'p50 ms',
      'p99 ms',
      'wall ms',
      'calls/request',
      'cancelled tx',
      'after',
    ];
    console.log([header, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n'));
  } finally {
    await api?.close().catch(() => undefined);
    await dynamo?.stop().catch(() => undefined);
    if (cleanup) rmSync(cleanup, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
