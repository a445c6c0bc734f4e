/**
 * What the tab's one event stream brings (issue 26 items 4 and 5): a streamed reply rendered while
 * it streams, then its final text (or, cancelled, its partial text marked stopped); the agent's
 * typing indicator; one stream per tab however the person navigates; and the server restarted
 * while the page is open: the page shows it lost the connection, reconnects with `Last-Event-ID`
 * and shows what was written while it was away, without a reload. Also the screenshots the issue
 * asks for: the inbox, and a chat with a live stream and a pending form request, at both widths.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Page, Request, Response, Route } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import {
  apiOk,
  chatItem,
  connection,
  createRequest,
  getChat,
  messageWith,
  openApp,
  postMessage,
  seedChat,
} from './support/app.js';
import { sequenceOf } from '../../functions/store/events-repo.js';
import type { OpenApp, StreamLog } from './support/app.js';
import { useRelay } from './support/relay.js';
import type { Relay } from './support/relay.js';

const relay = useRelay();
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const startStream = async (chatId: string): Promise<string> =>
  (
    (await apiOk(relay, 'POST', `/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
    })) as { id: string }
  ).id;
const chunk = (messageId: string, deltaText: string) =>
  apiOk(relay, 'POST', `/api/v1/messages/${messageId}/chunks`, { deltaText });

/** The event ids a client with the bearer secret sees on the stream, as they arrive. */
async function readEvents(
  target: Relay,
): Promise<{ events: { id: string; type: string; payload: any }[]; stop(): void }> {
  const controller = new AbortController();
  const res = await fetch(`${target.url}/api/v1/events/stream?ephemeral=true`, {
    headers: { authorization: `Bearer ${target.secret}` },
    signal: controller.signal,
  });
  const events: { id: string; type: string; payload: any }[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(bytes, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data) events.push(JSON.parse(data));
        }
      }
    } catch {
      // Stopped, or the server went away.
    }
  })();
  return { events, stop: () => controller.abort() };
}

describe('live updates', () => {
  it('a streamed reply renders while it streams, then its final text; a cancelled one keeps its partial text, marked stopped', async () => {
    const chatId = await seedChat(relay, { title: 'Streaming' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;

    const id = await startStream(chatId);
    const message = page.locator(`[data-testid="message"][data-message-id="${id}"]`);
    await message.and(page.locator('[data-stream-state="streaming"]')).waitFor();
    await chunk(id, 'Hello');
    await message
      .getByTestId('message-body')
      .filter({ hasText: /^Hello$/ })
      .waitFor();
    await chunk(id, ', *streaming* world');
    await message
      .getByTestId('message-body')
      .filter({ hasText: /^Hello, streaming world$/ })
      .waitFor();
    await expect(message.getAttribute('data-stream-state')).resolves.toBe('streaming');
    await expect(message.locator('em').textContent()).resolves.toBe('streaming');

    await apiOk(relay, 'POST', `/api/v1/messages/${id}/complete`, { finalText: 'The final answer.' });
    await message.and(page.locator('[data-stream-state="complete"]')).waitFor();
    await expect(message.getByTestId('message-body').textContent()).resolves.toBe('The final answer.');

    const cancelled = await startStream(chatId);
    const second = page.locator(`[data-testid="message"][data-message-id="${cancelled}"]`);
    await second.and(page.locator('[data-stream-state="streaming"]')).waitFor();
    await chunk(cancelled, 'Half of a');
    await chunk(cancelled, 'n answer');
    await second
      .getByTestId('message-body')
      .filter({ hasText: /^Half of an answer$/ })
      .waitFor();
    await apiOk(relay, 'POST', `/api/v1/messages/${cancelled}/cancel`);
    await second.and(page.locator('[data-stream-state="cancelled"]')).waitFor();
    await expect(second.getByTestId('message-body').textContent()).resolves.toBe('Half of an answer');
    await second.getByText('stopped', { exact: true }).waitFor();

    // The server agrees, and a reload shows the same.
    const stored = (await apiOk(relay, 'GET', `/api/v1/chats/${chatId}/messages`)) as { data: any[] };
    const byId = new Map(stored.data.map((m) => [m.id, m]));
    expect(byId.get(id)).toMatchObject({ stream_state: 'complete', content_final: 'The final answer.' });
    expect(byId.get(cancelled)).toMatchObject({
      stream_state: 'cancelled',
      content_final: null,
      content_partial: 'Half of an answer',
    });
    await page.reload();
    await second.and(page.locator('[data-stream-state="cancelled"]')).getByText('Half of an answer').waitFor();
    await expect(message.getByTestId('message-body').textContent()).resolves.toBe('The final answer.');
  });

  it("the agent's typing indicator shows on POST /typing and goes when its message arrives, or after its timeout", async () => {
    const chatId = await seedChat(relay, { title: 'Typing' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    const indicator = page.getByTestId('typing-indicator');
    await expect(indicator.count()).resolves.toBe(0);

    await apiOk(relay, 'POST', `/api/v1/chats/${chatId}/typing`, { agentId: 'assistant' });
    await indicator.filter({ hasText: 'Assistant is typing…' }).waitFor();
    await expect(page.getByRole('status').filter({ hasText: 'Assistant is typing…' }).count()).resolves.toBe(1);
    await postMessage(relay, chatId, 'Here I am.');
    await messageWith(page, 'Here I am.').waitFor();
    await indicator.waitFor({ state: 'detached' });

    // Typing with no message after it: the indicator goes by itself (the app's timeout, 6 s).
    await apiOk(relay, 'POST', `/api/v1/chats/${chatId}/typing`, { agentId: 'assistant' });
    await indicator.filter({ hasText: 'Assistant is typing…' }).waitFor();
    await indicator.waitFor({ state: 'detached', timeout: 15_000 });
  });

  it('one event stream per tab while the person moves between chats and views', async () => {
    const first = await seedChat(relay, { title: 'First of two' });
    const second = await seedChat(relay, { title: 'Second of two' });
    await postMessage(relay, first, 'in the first');
    await postMessage(relay, second, 'in the second');
    const archived = await seedChat(relay, { title: 'Archived one' });
    await apiOk(relay, 'POST', `/api/v1/chats/${archived}/archive`);

    app = await openApp(holder.browser, relay, '/');
    const { page, streams } = app;
    const go = async (name: string | RegExp, path: string) => {
      await page.getByRole('link', { name }).first().click();
      await page.waitForURL(`${relay.url}${path}`);
      expect(streams.open()).toBe(1);
    };
    await go(/^First of two/, `/chats/${first}`);
    await messageWith(page, 'in the first').waitFor();
    await go(/^Second of two/, `/chats/${second}`);
    await messageWith(page, 'in the second').waitFor();
    await go('Archived', '/archived');
    await go(/^Archived one/, `/chats/${archived}`);
    await page.getByTestId('chat-heading').filter({ hasText: 'Archived one' }).waitFor();
    await go('Inbox', '/');
    await go('New chat', '/new');
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    await go(/^First of two/, `/chats/${first}`);
    // Still live on the one stream: an agent's message shows.
    await postMessage(relay, first, 'still live');
    await messageWith(page, 'still live').waitFor();
    expect(streams.requests).toHaveLength(1);
    expect(streams.maxOpen()).toBe(1);
    expect(streams.open()).toBe(1);
  });

  it('the server restarted while the page is open: the page reconnects with Last-Event-ID and shows what it missed', async () => {
    const chatId = await seedChat(relay, { title: 'Through a restart' });
    app = await openApp(holder.browser, relay, '/');
    const { page, streams } = app;
    const preview = chatItem(page, chatId).getByTestId('chat-preview');
    await preview.waitFor();
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 7));

    const reader = await readEvents(relay);
    const before = await postMessage(relay, chatId, 'Before the restart');
    await preview.filter({ hasText: 'Before the restart' }).waitFor();
    // The ids the page may have seen last: the message's event and any after it.
    const seen = reader.events;
    const from = seen.findIndex((e) => e.type === 'message.created' && e.payload.messageId === before.id);
    expect(from).toBeGreaterThanOrEqual(0);

    // Hold the page's reconnects back until the server is back and a message was written meanwhile.
    await page.route('**/api/v1/events/stream*', (route) => route.abort('connectionrefused'));
    await relay.down();
    reader.stop();
    // The page resumes at the message's event or a later one: one the reader saw, or one written
    // as the server went down that reached the page first (its id still names a later position).
    const fromSeq = sequenceOf(seen[from]!.id)!;
    await page.locator('[data-testid="connection"]:not([data-state="open"])').waitFor();

    await relay.up();
    const missed = await postMessage(relay, chatId, 'Written while the page was away');
    expect(missed.id).toBeTruthy();
    await expect(preview.textContent()).resolves.toBe('Before the restart');

    // The browser retries a refused stream itself (every few seconds, with Last-Event-ID); when it
    // gives up, the page retries with a back-off of up to 30 s (web/src/live/events.ts), with the
    // same id as `cursor`. Either way the next attempt comes within 30 s of the stream coming back.
    const reconnected = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/v1/events/stream' && r.status() === 200,
      { timeout: 40_000 },
    );
    const attemptsBefore = streams.requests.length;
    await page.unroute('**/api/v1/events/stream*');
    const response = await reconnected.catch(async (error: Error) => {
      const attempts = streams.requests.slice(attemptsBefore);
      const described = attempts.map((r) => `${r.url()} ${r.failure()?.errorText ?? 'answered, or still waiting'}`);
      throw new Error(`${error.message}\nstream attempts since the unroute:\n${described.join('\n') || 'none'}`);
    });
    const headers = await response.request().allHeaders();
    const resumedFrom = headers['last-event-id'] ?? new URL(response.url()).searchParams.get('cursor');
    expect([resumedFrom, (sequenceOf(resumedFrom ?? '') ?? -1) >= fromSeq]).toEqual([resumedFrom, true]);
    await connection(page, 'open');
    await preview.filter({ hasText: 'Written while the page was away' }).waitFor();
    await expect(chatItem(page, chatId).getByTestId('unread-badge').textContent()).resolves.toBe(
      String((await getChat(relay, chatId)).unread_count),
    );
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(7);
    expect(streams.maxOpen()).toBe(1);
  }, 120_000);

  const cursorOf = (r: Request | Response): string | null => new URL(r.url()).searchParams.get('cursor');
  /**
   * Takes the page's stream away through a restart of the service, with its reconnects going through
   * `answer`, but the first without a `cursor` (the browser's own) gets an error answer: the browser
   * gives up, and the page reconnects itself with `cursor`, as after any error answer. Returns
   * the sequence of the event the page saw last before the restart or a later one (`fromSeq`), and
   * the stream response that opened after a message was written while the page was away, and the
   * requests `answer` was given (the page's reconnects and its checks of the cursor).
   */
  async function throughRestart(
    chatId: string,
    answer: (route: Route, cursor: string | null) => Promise<void>,
  ): Promise<{ page: Page; fromSeq: number; opened: Response; answered: Request[]; streams: StreamLog }> {
    app = await openApp(holder.browser, relay, '/');
    const { page, streams } = app;
    const preview = chatItem(page, chatId).getByTestId('chat-preview');
    const reader = await readEvents(relay);
    const before = await postMessage(relay, chatId, 'Before going down');
    await preview.filter({ hasText: 'Before going down' }).waitFor();
    const seen = reader.events.find((e) => e.type === 'message.created' && e.payload.messageId === before.id);
    reader.stop();
    const fromSeq = sequenceOf(seen!.id)!;
    let gaveUp = false;
    const answered: Request[] = [];
    await page.route('**/api/v1/events/stream*', (route) => {
      const cursor = cursorOf(route.request());
      if (cursor || gaveUp) return (answered.push(route.request()), answer(route, cursor));
      gaveUp = true;
      return route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{}}' });
    });
    await relay.down();
    await page.locator('[data-testid="connection"]:not([data-state="open"])').waitFor();
    await relay.up();
    const opened = page.waitForResponse(
      (r) =>
        new URL(r.url()).pathname === '/api/v1/events/stream' &&
        r.request().resourceType() === 'eventsource' &&
        r.status() === 200,
      { timeout: 60_000 },
    );
    await postMessage(relay, chatId, 'Written while the page was away');
    const response = await opened;
    await connection(page, 'open');
    await preview.filter({ hasText: 'Written while the page was away' }).waitFor();
    await expect(chatItem(page, chatId).getByTestId('unread-badge').textContent()).resolves.toBe(
      String((await getChat(relay, chatId)).unread_count),
    );
    return { page, fromSeq, opened: response, answered, streams };
  }

  it('the service answers errors or cannot be reached while the page reconnects: the page keeps its place, and resumes from it', async () => {
    const chatId = await seedChat(relay, { title: 'Down for a while' });
    // Its requests with the cursor: two reconnects get a gateway's error answer (503: the browser
    // gives that EventSource up); the page's check of the cursor after the first cannot connect,
    // after the second it opens (the service is back), and is closed at once; then it reconnects.
    let n = 0;
    const { fromSeq, opened, answered, streams } = await throughRestart(chatId, (route, cursor) => {
      if (!cursor) return route.continue();
      n++;
      if (n === 1 || n === 3) {
        return route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: '{"message":"Service Unavailable"}',
        });
      }
      return n === 2 ? route.abort('connectionrefused') : route.continue();
    });
    const kinds = ['eventsource', 'fetch', 'eventsource', 'fetch', 'eventsource'];
    expect(answered.map((r) => r.resourceType())).toEqual(kinds);
    expect(await answered[3]!.response().then((r) => r?.status())).toBe(200);
    expect(answered[4]).toBe(opened.request());
    // Every request of the page's own carried its place: a cursor at the last event it saw or later.
    const places = answered.map((r) => [cursorOf(r), (sequenceOf(cursorOf(r) ?? '') ?? -1) >= fromSeq]);
    expect(places).toEqual(answered.map((r) => [cursorOf(r), true]));
    // The check that opened a stream closed it: one stream is open, the page's.
    for (let waited = 0; streams.open() > 1 && waited < 5000; waited += 100)
      await new Promise((r) => setTimeout(r, 100));
    expect(streams.open()).toBe(1);
  }, 120_000);

  it('a cursor the service no longer knows (400) is dropped: the page reconnects live, and re-reads what it missed', async () => {
    const chatId = await seedChat(relay, { title: 'Past retention' });
    let refusals = 0;
    const { opened, answered } = await throughRestart(chatId, (route, cursor) => {
      if (!cursor) return route.continue();
      refusals++;
      return route.fulfill({
        status: 400,
        contentType: 'application/json',
        body: JSON.stringify({
          error: { code: 'VALIDATION_ERROR', message: 'cursor event id was not found.', details: { field: 'cursor' } },
        }),
      });
    });
    expect(refusals).toBeGreaterThan(0);
    // It opened live (no cursor, no Last-Event-ID), once the service had refused the cursor.
    expect([cursorOf(opened), opened.request().headers()['last-event-id'] ?? null]).toEqual([null, null]);
    const live = answered.indexOf(opened.request());
    expect(answered.slice(0, live).some((r) => cursorOf(r) !== null)).toBe(true);
  }, 120_000);

  it('screenshots: the inbox, and a chat with a live stream and a pending form request (1280×800, 390×844)', async () => {
    const work = await seedChat(relay, { title: 'Quarterly report', tags: ['work'] });
    await postMessage(relay, work, 'Can you draft the outline of the **quarterly report**?', 'user');
    await postMessage(
      relay,
      work,
      'Here is a first outline:\n\n1. Summary\n2. Revenue\n3. Costs\n\n```ts\nconst total = revenue - costs;\n```',
    );
    await createRequest(relay, work, {
      type: 'form',
      title: 'Report details',
      body: 'A few details before I write it.',
      config: {
        fields: [
          { name: 'audience', type: 'text', label: 'Audience', required: true },
          { name: 'tone', type: 'select', label: 'Tone', options: ['Formal', 'Friendly'] },
          { name: 'due', type: 'date', label: 'Due date' },
          { name: 'charts', type: 'checkbox', label: 'Include charts' },
        ],
        submitLabel: 'Send details',
      },
    });
    const other = await seedChat(relay, { title: 'Trip to Lisbon' });
    await postMessage(relay, other, 'Flights are booked for Friday.');
    const pinned = await seedChat(relay, { title: 'Daily standup' });
    await postMessage(relay, pinned, 'Standup notes are ready.');
    await apiOk(relay, 'PATCH', `/api/v1/chats/${pinned}`, { pinned: true });
    const reply = await startStream(work);
    await chunk(reply, 'Thanks! I am writing the report now. The summary will cover');

    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await chatItem(page, work).getByTestId('pending-badge').waitFor();
    const inbox = await screenshots(page, 'inbox');

    await page.goto(`${relay.url}/chats/${work}`);
    await connection(page, 'open');
    const streaming = page.locator(`[data-message-id="${reply}"][data-stream-state="streaming"]`);
    await streaming.waitFor();
    await chunk(reply, ' revenue and costs…');
    await streaming.getByText('revenue and costs…', { exact: false }).waitFor();
    await page
      .getByRole('region', { name: 'Pending requests' })
      .getByRole('heading', { name: 'Report details' })
      .waitFor();
    await page.locator('pre code.hljs span').first().waitFor();
    const chat = await screenshots(page, 'chat-live');
    expect([...inbox, ...chat].map((f) => f.replace(/.*\//, ''))).toEqual([
      'inbox-1280.png',
      'inbox-390.png',
      'chat-live-1280.png',
      'chat-live-390.png',
    ]);
  });
});
