/**
 * The first load reads each thing once: opened at `/` or at a chat's URL, the page asks the
 * service for the configuration, its session, the chat list, the event stream and (on a chat's
 * URL) that chat, its newest messages, its pending requests and its media, each exactly once,
 * and switching to another chat reads that chat's data once. The page used to read the list
 * and the open chat twice: once on mount and again when its event stream first opened.
 *
 * "Until the page is idle": the live connection is open, the content is shown, no API request
 * is in flight and none has started for QUIET_MS. Every request of the whole test is counted,
 * so a repeat that came later still fails the final comparison.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page, Request } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import {
  apiOk,
  chatItem,
  connection,
  createRequest,
  messageWith,
  openApp,
  postMessage,
  seedChat,
} from './support/app.js';
import type { OpenApp } from './support/app.js';
import { useRelay } from './support/relay.js';
import { CHOICE_ONE } from './support/screens.js';
import sharp from 'sharp';

const relay = useRelay();
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const QUIET_MS = 1500;

/** Every /api request a page makes, by `METHOD /path?query`, and how many are still unanswered. */
interface ApiLog {
  counts: Map<string, number>;
  /** The requests made after `mark` (see since()). */
  since(mark: number): Map<string, number>;
  mark(): number;
  idle(): boolean;
}

function watchApi(page: Page): ApiLog {
  const all: string[] = [];
  const counts = new Map<string, number>();
  const pending = new Set<Request>();
  let lastActivity = Date.now();
  const isApi = (r: Request) => new URL(r.url()).pathname.startsWith('/api/');
  // The event stream stays open: it is counted, but never awaited.
  const isStream = (r: Request) => new URL(r.url()).pathname === '/api/v1/events/stream';
  page.on('request', (r) => {
    if (!isApi(r)) return;
    const url = new URL(r.url());
    const key = `${r.method()} ${url.pathname}${url.search}`;
    all.push(key);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (isStream(r)) return;
    lastActivity = Date.now();
    pending.add(r);
  });
  const done = (r: Request) => {
    if (!pending.delete(r)) return;
    lastActivity = Date.now();
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  const tally = (keys: string[]) => {
    const m = new Map<string, number>();
    for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
    return m;
  };
  return {
    counts,
    mark: () => all.length,
    since: (mark) => tally(all.slice(mark)),
    idle: () => pending.size === 0 && Date.now() - lastActivity >= QUIET_MS,
  };
}

/** Waits until no API request is in flight and none has started for QUIET_MS. */
async function settled(log: ApiLog, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!log.idle()) {
    if (Date.now() > until) throw new Error('the page never stopped making requests');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const sorted = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));
const once = (keys: string[]) => Object.fromEntries(keys.sort().map((k) => [k, 1]));

/**
 * What any signed-in first load needs: the access check, the inbox's first page, the stream, and
 * every chat's pending requests (the top bar's Approvals badge).
 */
const LIST = 'GET /api/v1/chats?archived=false&limit=100';
const STREAM = 'GET /api/v1/events/stream?ephemeral=true';
const APPROVALS = 'GET /api/v1/requests?status=pending&limit=200';
const SHELL = ['GET /api/v1/config', 'POST /api/v1/auth/session', LIST, STREAM, APPROVALS];
const chatReads = (chatId: string) => [
  `GET /api/v1/chats/${chatId}`,
  `GET /api/v1/chats/${chatId}/messages?limit=50`,
  `GET /api/v1/chats/${chatId}/requests?status=all`,
];

/** Everything a first load at the opened chat's URL reads. */
const openChatLoad = () => [
  ...SHELL,
  ...chatReads(open.chatId),
  `GET /api/v1/media/${open.mediaId}`,
  `GET /api/v1/files/${open.mediaId}/thumbnail`,
];
const without = (m: Map<string, number>, key: string) => new Map([...m].filter(([k]) => k !== key));

/** The opened chat as a person sees it once loaded: its messages, image and request, and the list. */
async function openChatShown(page: Page): Promise<void> {
  await messageWith(page, 'Here is the chart.').waitFor();
  await page.getByRole('img', { name: 'chart.png' }).waitFor();
  await page.getByRole('region', { name: 'Pending requests' }).waitFor();
  await chatItem(page, other).waitFor();
}

let open: { chatId: string; mediaId: string };
let other: string;

beforeAll(async () => {
  // The chat opened by URL: messages, a pending request and an image (its metadata and thumbnail).
  const chatId = await seedChat(relay, { title: 'Release notes' });
  await postMessage(relay, chatId, 'The notes are drafted.');
  await createRequest(relay, chatId, CHOICE_ONE);
  const png = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#2f6fb0' } })
    .png()
    .toBuffer();
  const media = await apiOk<{ id: string }>(relay, 'POST', `/api/v1/chats/${chatId}/media`, {
    fileName: 'chart.png',
    contentType: 'image/png',
    base64Data: png.toString('base64'),
    kind: 'image',
  });
  await apiOk(relay, 'POST', `/api/v1/chats/${chatId}/messages`, {
    role: 'agent',
    senderId: 'assistant',
    content: 'Here is the chart.',
    trace: { mediaIds: [media.id] },
  });
  open = { chatId, mediaId: media.id };
  other = await seedChat(relay, { title: 'Standup' });
  await postMessage(relay, other, 'Standup moved to ten.');
  // Read chats: opening an unread one marks it read, and that write's event re-reads the chat.
  for (const id of [chatId, other]) await apiOk(relay, 'POST', `/api/v1/chats/${id}/mark-read`);
  // The thumbnail is made after the upload; until then the page would fall back to the original.
  for (;;) {
    const res = await relay.api('GET', `/api/v1/files/${media.id}/thumbnail`);
    if (res.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});

/** Opens the app at `path` with every /api request of the page counted from the start. */
async function openWatched(path: string): Promise<{ page: Page; log: ApiLog }> {
  let log!: ApiLog;
  app = await openApp(holder.browser, relay, path, undefined, { onPage: (page) => void (log = watchApi(page)) });
  return { page: app.page, log };
}

describe('the first load', () => {
  it('at / reads the configuration, the session, the chat list and the stream once each', async () => {
    const { page, log } = await openWatched('/');
    await chatItem(page, open.chatId).waitFor();
    await chatItem(page, other).waitFor();
    await settled(log);

    expect(sorted(log.counts)).toEqual(once([...SHELL]));
    await screenshots(page, 'first-load-inbox');
  });

  it("at a chat's URL reads that chat, its messages, requests and media once each; a switch reads the next chat once", async () => {
    const { page, log } = await openWatched(`/chats/${open.chatId}`);
    await openChatShown(page);
    await settled(log);

    const firstLoad = once(openChatLoad());
    expect(sorted(log.counts)).toEqual(firstLoad);
    await screenshots(page, 'first-load-chat');

    // Another chat from the list: its data once, and nothing of the first chat again.
    const mark = log.mark();
    await chatItem(page, other).getByRole('link').click();
    await messageWith(page, 'Standup moved to ten.').waitFor();
    await settled(log);
    expect(sorted(log.since(mark))).toEqual(once(chatReads(other)));
    expect(sorted(log.counts)).toEqual({ ...firstLoad, ...once(chatReads(other)) });
  });

  // A stream that never opens must not keep the page empty: the first reads go without it (once).
  it.each([
    ['refused', (page: Page) => page.route('**/api/v1/events/stream**', (route) => route.abort())],
    ['never answered', (page: Page) => page.route('**/api/v1/events/stream**', () => undefined)],
  ])('with the event stream %s, the page still reads the list and the open chat once each', async (_, hold) => {
    let log!: ApiLog;
    app = await openApp(holder.browser, relay, `/chats/${open.chatId}`, undefined, {
      liveEvents: false,
      onPage: async (page) => {
        log = watchApi(page);
        await hold(page);
      },
    });
    await openChatShown(app.page);
    await settled(log);
    expect(sorted(without(log.counts, STREAM))).toEqual(once(openChatLoad().filter((k) => k !== STREAM)));
    expect(await app.page.getByTestId('connection').getAttribute('data-state')).not.toBe('open');
  });

  it('a message that arrives while the open chat is being read stays in view when the read returns', async () => {
    const chatId = await seedChat(relay, { title: 'Read under way' });
    await postMessage(relay, chatId, 'Before the read.');
    // The chat's messages read is answered by the service at once, and handed to the page later.
    let answered!: () => void;
    const served = new Promise<void>((ok) => (answered = ok));
    let release!: () => void;
    const held = new Promise<void>((ok) => (release = ok));
    app = await openApp(holder.browser, relay, `/chats/${chatId}`, undefined, {
      onPage: async (page) => {
        await page.route(
          (url) => url.pathname === `/api/v1/chats/${chatId}/messages`,
          async (route) => {
            const response = await route.fetch();
            answered();
            await held;
            await route.fulfill({ response });
          },
        );
      },
    });
    const { page } = app;
    await served;
    await postMessage(relay, chatId, 'While the read was on its way.');
    // The page has its event: the list's row shows it.
    await chatItem(page, chatId).getByTestId('chat-preview').filter({ hasText: 'While the read' }).waitFor();
    release();
    await messageWith(page, 'Before the read.').waitFor();
    // It used to vanish here: the read's answer (served before it) replaced what the events had added.
    await messageWith(page, 'While the read was on its way.').waitFor({ timeout: 5_000 });
  });

  // Last: it restarts the server.
  it('after a reconnect the page reads the list and the open chat again, once each (catching up)', async () => {
    const { page, log } = await openWatched(`/chats/${open.chatId}`);
    await openChatShown(page);
    await settled(log);

    // Hold the page's reconnects back while the server restarts, then let exactly one through.
    await page.route('**/api/v1/events/stream*', (route) => route.abort('connectionrefused'));
    await relay.down();
    await page.locator('[data-testid="connection"]:not([data-state="open"])').waitFor();
    await relay.up();
    const mark = log.mark();
    await page.unroute('**/api/v1/events/stream*');
    await connection(page, 'open');
    await settled(log);

    const reads = [LIST, APPROVALS, ...chatReads(open.chatId)];
    const again = new Map([...log.since(mark)].filter(([key]) => reads.includes(key)));
    expect(sorted(again)).toEqual(once(reads));
  });
});
