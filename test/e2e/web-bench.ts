/**
 * `npm run bench:web` (test/e2e/web-bench.ts: typed with the DOM, beside the browser tests): the web app's budgets (issue 26), measured in Debian's Chromium against
 * `npm start` as it ships (the launcher, persistence on, the secret on), on this machine:
 *
 * - initial JavaScript, gzipped: every script index.html loads before the app runs (≤ 150 KB);
 * - an inbox of 200 chats: navigation start to the 200th chat in the list (≤ 1 s);
 * - a 2,000-chunk stream: from each chunk's POST answered to its text visible in the page
 *   (p95 ≤ 250 ms), and the longest main-thread task while it streams (≤ 200 ms);
 * - event stream connections the tab holds at once (≤ 1).
 *
 * Results go to .bench/web.json; a budget missed makes the exit code 1. Environment: CHROMIUM_PATH
 * (default /usr/bin/chromium), WEB_BENCH_CHUNKS (default 2000), WEB_BENCH_CHATS (default 200).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { WEB_BUILD_DIR } from '../../lib/web-policy.js';
import { runtimeFolder, startRuntime } from '../support/runtime.js';
import { percentile } from '../bench/stats.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CHUNKS = Number(process.env.WEB_BENCH_CHUNKS ?? 2000);
const CHATS = Number(process.env.WEB_BENCH_CHATS ?? 200);
const INBOX_RUNS = 5;

const BUDGETS = {
  initialJsGzipKb: 150,
  inbox200Ms: 1000,
  chunkVisibleP95Ms: 250,
  longestTaskMs: 200,
  streamConnections: 1,
};

/** The scripts index.html loads up front (its module entry and what it preloads), gzipped. */
function initialJs(distDir: string): { files: string[]; gzipBytes: number; rawBytes: number } {
  const html = readFileSync(join(distDir, 'index.html'), 'utf8');
  const files = [
    ...html.matchAll(/<script[^>]+src="([^"]+)"/g),
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+)"/g),
  ].map((m) => m[1]!);
  let gzipBytes = 0;
  let rawBytes = 0;
  for (const file of files) {
    const bytes = readFileSync(join(distDir, file));
    rawBytes += bytes.length;
    gzipBytes += gzipSync(bytes, { level: 9 }).length;
  }
  return { files, gzipBytes, rawBytes };
}

async function main(): Promise<void> {
  const secret = `og_${randomBytes(30).toString('base64url')}`;
  const { dir: dataDir, configPath } = runtimeFolder('chat-relay-web-bench-', {
    models: [{ id: 'model-a', name: 'Model A', description: '' }],
    security: { readEndpointsRequireInstanceSecret: true },
  });
  // npm start as it ships; it builds web/dist first when the app's sources changed.
  const runtime = await startRuntime(
    {
      DATA_DIR: join(dataDir, 'data'),
      CONFIG_PATH: configPath,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      OPENGRAM_INSTANCE_SECRET: secret,
    },
    'local/main.ts',
  );
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${runtime.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as { id: string }) : undefined;
    };

    const js = initialJs(join(ROOT, WEB_BUILD_DIR));
    log(`initial JavaScript: ${js.files.join(', ')}: ${kb(js.rawBytes)} KB, ${kb(js.gzipBytes)} KB gzipped`);

    log(`seeding ${CHATS} chats…`);
    for (let i = 0; i < CHATS; i += 10) {
      await Promise.all(
        Array.from({ length: Math.min(10, CHATS - i) }, (_, j) =>
          api('POST', '/chats', { agentIds: ['assistant'], title: `Chat ${i + j}`, firstMessage: `Hello ${i + j}` }),
        ),
      );
    }

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // tsx keeps function names with an `__name(fn, "name")` helper, which functions handed to the
    // page (evaluate) then call: give the page a no-op one.
    await context.addInitScript({ content: 'window.__name = (fn) => fn;' });
    const page = await context.newPage();
    const streams = trackStreams(page);
    await page.goto(`${runtime.url}/`);
    await page.getByLabel('Instance secret').fill(secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('chat-item').first().waitFor();

    // Inbox: navigation start to the last of CHATS chats rendered, with a warm server.
    const inboxMs: number[] = [];
    for (let run = 0; run < INBOX_RUNS; run++) {
      await page.goto(`${runtime.url}/`);
      const ms = await page.evaluate(
        (count) =>
          new Promise<number>((done) => {
            const check = () => {
              if (document.querySelectorAll('[data-testid="chat-item"]').length >= count) done(performance.now());
              else requestAnimationFrame(check);
            };
            check();
          }),
        CHATS,
      );
      inboxMs.push(ms);
    }
    log(`inbox of ${CHATS} chats rendered after (ms): ${inboxMs.map((ms) => ms.toFixed(0)).join(', ')}`);

    // Streaming: open a chat, then post CHUNKS chunks one after another, as an agent does.
    const chatId = (await api('POST', '/chats', { agentIds: ['assistant'], title: 'Streaming bench' }))!.id;
    await page.goto(`${runtime.url}/chats/${chatId}`);
    await page.getByTestId('chat-heading').getByText('Streaming bench').waitFor();
    await page.locator('[data-testid="connection"][data-state="open"]').waitFor();
    const message = (await api('POST', `/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    }))!;
    const body = page.locator(`[data-message-id="${message.id}"]`);
    await body.waitFor();
    await page.evaluate((messageId) => {
      const w = window as unknown as { benchSeen: number[]; benchTasks: number[] };
      w.benchSeen = [];
      w.benchTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.benchTasks.push(entry.duration);
      }).observe({ type: 'longtask', buffered: false });
      const record = () => {
        const article = document.querySelector(`[data-message-id="${messageId}"]`);
        const text = article?.querySelector('[data-testid="message-body"]')?.textContent ?? '';
        const last = /k(\d+)\s*$/.exec(text.slice(-24));
        if (!last) return;
        const index = Number(last[1]);
        const now = Date.now();
        for (let i = w.benchSeen.length; i <= index; i++) w.benchSeen[i] = now;
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
    }, message.id);

    const answered: number[] = [];
    const began = Date.now();
    for (let i = 0; i < CHUNKS; i++) {
      await api('POST', `/messages/${message.id}/chunks`, { deltaText: `k${i} ` });
      answered.push(Date.now());
    }
    const postingMs = Date.now() - began;
    await page.waitForFunction(
      (last) => (window as unknown as { benchSeen: number[] }).benchSeen.length > last,
      CHUNKS - 1,
      { timeout: 30_000 },
    );
    const { seen, tasks } = await page.evaluate(() => {
      const w = window as unknown as { benchSeen: number[]; benchTasks: number[] };
      return { seen: w.benchSeen, tasks: w.benchTasks };
    });
    await api('POST', `/messages/${message.id}/complete`, {});
    const latencies = answered.map((at, i) => Math.max(0, seen[i]! - at));
    const sorted = [...latencies].sort((a, b) => a - b);
    const longest = tasks.length ? Math.max(...tasks) : 0;
    log(
      `stream of ${CHUNKS} chunks posted in ${postingMs} ms (${((CHUNKS * 1000) / postingMs).toFixed(0)}/s); ` +
        `visible after their POST answered: p50 ${percentile(sorted, 50).toFixed(0)} ms, ` +
        `p95 ${percentile(sorted, 95).toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms; ` +
        `long tasks (>50 ms): ${tasks.length}, longest ${longest.toFixed(0)} ms`,
    );
    log(`event stream connections: ${streams.opened} opened, at most ${streams.maxOpen} at once`);

    const results = {
      initialJs: { files: js.files, rawBytes: js.rawBytes, gzipBytes: js.gzipBytes },
      inbox: { chats: CHATS, runsMs: inboxMs, maxMs: Math.max(...inboxMs) },
      stream: {
        chunks: CHUNKS,
        postingMs,
        visibleMs: { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted.at(-1) },
        longTasks: tasks.length,
        longestTaskMs: longest,
      },
      streamConnections: { opened: streams.opened, maxOpen: streams.maxOpen },
    };
    const checks: [string, number, number][] = [
      ['initial JavaScript, KB gzipped', js.gzipBytes / 1024, BUDGETS.initialJsGzipKb],
      [`inbox of ${CHATS} chats, ms (slowest of ${INBOX_RUNS})`, Math.max(...inboxMs), BUDGETS.inbox200Ms],
      ['chunk visible after its POST, ms p95', percentile(sorted, 95), BUDGETS.chunkVisibleP95Ms],
      ['longest main-thread task while streaming, ms', longest, BUDGETS.longestTaskMs],
      ['event stream connections at once', streams.maxOpen, BUDGETS.streamConnections],
    ];
    console.log('\n| Budget | Measured | Limit | |\n|---|---:|---:|---|');
    let failed = false;
    for (const [name, value, limit] of checks) {
      const ok = value <= limit;
      failed ||= !ok;
      console.log(`| ${name} | ${value.toFixed(1)} | ${limit} | ${ok ? 'ok' : 'OVER'} |`);
    }
    mkdirSync(join(ROOT, '.bench'), { recursive: true });
    writeFileSync(join(ROOT, '.bench', 'web.json'), `${JSON.stringify({ results, budgets: BUDGETS }, null, 2)}\n`);
    process.exitCode = failed ? 1 : 0;
  } finally {
    await browser.close();
    await runtime.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Event stream requests: how many the page opened, and the most open at one time. */
function trackStreams(page: Page): { opened: number; maxOpen: number } {
  const counts = { opened: 0, maxOpen: 0 };
  let open = 0;
  const isStream = (url: string) => url.includes('/api/v1/events/stream');
  page.on('request', (r) => {
    if (!isStream(r.url())) return;
    counts.opened++;
    open++;
    counts.maxOpen = Math.max(counts.maxOpen, open);
  });
  const closed = (r: { url(): string }) => {
    if (isStream(r.url())) open--;
  };
  page.on('requestfinished', closed);
  page.on('requestfailed', closed);
  return counts;
}

const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const log = (line: string) => console.log(`web bench: ${line}`);

await main();
