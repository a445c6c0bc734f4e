/**
 * An open chat (issue 26 item 4): the history with older pages read as the person scrolls up
 * (keeping their place), messages rendered as GitHub-flavoured markdown with code highlighted once
 * the lazy chunk arrives and raw HTML shown as text, never as markup; sending (Enter sends,
 * Shift+Enter a new line; shown at once; an Idempotency-Key that a retry reuses, so a send whose
 * request or answer was lost is stored exactly once); a reload keeps the chat and the draft.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Request, Route } from 'playwright-core';
import { useBrowser } from './support/browser.js';
import {
  allMessages,
  apiOk,
  composer,
  eventually,
  forbidDialogs,
  messageWith,
  messages,
  openApp,
  postMessage,
  seedChat,
} from './support/app.js';
import type { OpenApp } from './support/app.js';
import { useRelay } from './support/relay.js';

const relay = useRelay();
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const label = (i: number) => `History message ${String(i).padStart(3, '0')}`;

/** The POSTs of user messages the page sends to this chat. */
function sends(app: OpenApp, chatId: string): Request[] {
  const seen: Request[] = [];
  app.page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === `/api/v1/chats/${chatId}/messages`) seen.push(r);
  });
  return seen;
}

describe('an open chat', () => {
  it('shows the newest page, reads older pages when scrolled to the top and keeps the place', async () => {
    const chatId = await seedChat(relay, { title: 'Long history' });
    const total = 120; // more than two pages of 50
    // Seeded 8 at a time (sequential POSTs take a minute on a busy machine); the order is the server's.
    for (let i = 1; i <= total; i += 8) {
      const batch = Array.from({ length: Math.min(8, total - i + 1) }, (_, k) => i + k);
      await Promise.all(batch.map((n) => postMessage(relay, chatId, label(n), n % 2 ? 'agent' : 'user')));
    }
    const order = (await allMessages(relay, chatId)).map((m) => m.content_final as string);
    expect(order).toHaveLength(total);
    const [oldest, newest] = [order[0]!, order[total - 1]!];

    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await messageWith(page, newest).waitFor();
    await expect(messages(page).count()).resolves.toBe(50);
    await expect(messageWith(page, oldest).count()).resolves.toBe(0);
    const scroller = page.locator('.messages');
    const inView = async (text: string) => {
      const box = await messageWith(page, text).boundingBox();
      const frame = await scroller.boundingBox();
      return !!box && !!frame && box.y + box.height > frame.y && box.y < frame.y + frame.height;
    };
    expect(await inView(newest)).toBe(true);

    // To the top: the next page arrives above, and the message that was at the top stays in view.
    const firstShown = order[total - 50]!;
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await eventually(() => messages(page).count(), 100);
    expect(await inView(firstShown)).toBe(true);
    expect(await inView(order[total - 100]!)).toBe(false);

    // To the top again: the last page; the oldest message appears, and the start of the chat.
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await messageWith(page, oldest).waitFor();
    await expect(messages(page).count()).resolves.toBe(total);
    await page.getByTestId('load-older').filter({ hasText: 'Start of the chat' }).waitFor();
    await expect(page.getByTestId('message-body').allTextContents()).resolves.toEqual(order);
  });

  it('renders markdown: a GFM table, a list, emphasis, a safe link, a highlighted code block; raw HTML as text, never run', async () => {
    const chatId = await seedChat(relay, { title: 'Markdown' });
    const content = [
      '| Name | Value |',
      '|---|---|',
      '| alpha | 1 |',
      '',
      '- item one',
      '- item two',
      '',
      'Some *emphasis* and **strong** words, a [link](https://example.com/page).',
      '',
      '```ts',
      'const answer: number = 42;',
      '```',
      '',
      'Raw <b>bold</b> and <img src="x" onerror="alert(1)"> inline.',
      '',
      '<script>alert("script ran")</script>',
    ].join('\n');
    const { id } = await postMessage(relay, chatId, content);

    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    const dialogs = forbidDialogs(page);
    const chunk = page.waitForRequest((r) => /\/assets\/highlight-[^/]+\.js$/.test(new URL(r.url()).pathname));
    await page.goto(`${relay.url}/chats/${chatId}`);
    const body = page.locator(`[data-testid="message"][data-message-id="${id}"] [data-testid="message-body"]`);
    await body.waitFor();

    await expect(body.locator('table th').allTextContents()).resolves.toEqual(['Name', 'Value']);
    await expect(body.locator('table td').allTextContents()).resolves.toEqual(['alpha', '1']);
    await expect(body.locator('ul > li').allTextContents()).resolves.toEqual(['item one', 'item two']);
    await expect(body.locator('em').textContent()).resolves.toBe('emphasis');
    await expect(body.locator('strong').textContent()).resolves.toBe('strong');
    const link = body.getByRole('link', { name: 'link' });
    await expect(link.getAttribute('href')).resolves.toBe('https://example.com/page');
    await expect(link.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(link.getAttribute('target')).resolves.toBe('_blank');

    // The code block: `pre code` at once, highlighted spans once the lazy highlight.js chunk loaded.
    await chunk;
    await expect(body.locator('pre code').textContent()).resolves.toBe('const answer: number = 42;');
    await body.locator('pre code.hljs span').first().waitFor();
    expect(await body.locator('pre code.hljs span').count()).toBeGreaterThan(1);

    // Raw HTML: text the person can read, no element, nothing ran.
    await expect(body.locator('script, b, img, [onerror]').count()).resolves.toBe(0);
    const text = await body.textContent();
    expect(text).toContain('<b>bold</b>');
    expect(text).toContain('<script>alert("script ran")</script>');
    expect(dialogs.dialogs).toEqual([]);
  });

  it('Enter sends, Shift+Enter starts a new line; the message shows at once and is sent with an Idempotency-Key', async () => {
    const chatId = await seedChat(relay, { title: 'Sending' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    const posted = sends(app, chatId);
    // Hold the POST until the page has shown the message as sending.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route(`**/api/v1/chats/${chatId}/messages`, async (route: Route) => {
      if (route.request().method() !== 'POST') return route.continue();
      await released;
      await route.continue();
    });

    const box = composer(page);
    await box.click();
    await page.keyboard.type('line one');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('line two');
    await expect(box.inputValue()).resolves.toBe('line one\nline two');
    await page.keyboard.press('Enter');

    const shown = messageWith(page, 'line one');
    await shown.and(page.locator('[data-status="sending"]')).waitFor();
    await expect(box.inputValue()).resolves.toBe('');
    release();
    await shown.and(page.locator('[data-status="sent"][data-message-id]')).waitFor();

    expect(posted).toHaveLength(1);
    expect(posted[0]!.headers()['idempotency-key']).toMatch(UUID);
    const stored = (await allMessages(relay, chatId)).filter((m) => m.role === 'user');
    expect(stored.map((m) => m.content_final)).toEqual(['line one\nline two']);
    await expect(shown.getAttribute('data-message-id')).resolves.toBe(stored[0].id);
    await expect(shown.getByTestId('message-body').innerText()).resolves.toBe('line one\nline two');
  });

  // A lost answer is seen as failed only while the live events are down too (with them up, the
  // message's own event shows it stored: the next test).
  for (const lost of ['request', 'answer'] as const) {
    it(`a send whose ${lost} was lost shows as failed with Retry; Retry reuses the key and the chat has it once`, async () => {
      const chatId = await seedChat(relay, { title: `Lost ${lost}` });
      app = await openApp(holder.browser, relay, `/chats/${chatId}`, undefined, { liveEvents: lost === 'request' });
      const { page } = app;
      const posted = sends(app, chatId);
      let failed = false;
      await page.route(`**/api/v1/chats/${chatId}/messages`, async (route: Route) => {
        if (route.request().method() !== 'POST' || failed) return route.continue();
        failed = true;
        // The lost request never reaches the server; the lost answer does, and its answer is dropped.
        if (lost === 'answer') await route.fetch();
        await route.abort('connectionreset');
      });

      const text = `Sent once despite a lost ${lost}`;
      await composer(page).fill(text);
      await page.keyboard.press('Enter');
      const shown = messageWith(page, text);
      await shown.and(page.locator('[data-status="failed"]')).waitFor();
      const storedBefore = (await allMessages(relay, chatId)).filter((m) => m.content_final === text);
      expect(storedBefore).toHaveLength(lost === 'answer' ? 1 : 0);

      await shown.getByRole('button', { name: 'Retry' }).click();
      await page.locator('[data-status="sending"], [data-status="failed"]').waitFor({ state: 'detached' });
      await expect(messageWith(page, text).count()).resolves.toBe(1);
      await shown.and(page.locator('[data-status="sent"][data-message-id]')).waitFor();

      expect(posted).toHaveLength(2);
      const keys = posted.map((r) => r.headers()['idempotency-key']);
      expect(keys[0]).toMatch(UUID);
      expect(keys[1]).toBe(keys[0]);
      const stored = (await allMessages(relay, chatId)).filter((m) => m.content_final === text);
      expect(stored).toHaveLength(1);
      if (lost === 'answer') expect(stored[0].id).toBe(storedBefore[0].id);
      await expect(shown.getAttribute('data-message-id')).resolves.toBe(stored[0].id);
    });
  }

  it('a send whose answer was lost while live events flow shows once, sent: its own event says it is stored', async () => {
    const chatId = await seedChat(relay, { title: 'Lost answer, live' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    const posted = sends(app, chatId);
    let answered = false;
    await page.route(`**/api/v1/chats/${chatId}/messages`, async (route: Route) => {
      if (route.request().method() !== 'POST' || answered) return route.continue();
      answered = true;
      await route.fetch();
      await route.abort('connectionreset');
    });
    const text = 'Stored though its answer was lost';
    await composer(page).fill(text);
    await page.keyboard.press('Enter');
    const shown = messageWith(page, text);
    await shown.and(page.locator('[data-status="sent"][data-message-id]')).waitFor();
    const stored = (await allMessages(relay, chatId)).filter((m) => m.content_final === text);
    expect(stored).toHaveLength(1);
    await expect(shown.getAttribute('data-message-id')).resolves.toBe(stored[0].id);
    // No copy left failed or sending, no Retry offered, nothing sent again.
    await expect(page.locator('[data-status="sending"], [data-status="failed"]').count()).resolves.toBe(0);
    await expect(messageWith(page, text).count()).resolves.toBe(1);
    expect(posted).toHaveLength(1);
  });

  it('a reload keeps the open chat and the draft in the composer', async () => {
    const chatId = await seedChat(relay, { title: 'Keep my place' });
    await postMessage(relay, chatId, 'Something to answer');
    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await page.getByRole('link', { name: /^Keep my place/ }).click();
    await page.waitForURL(`${relay.url}/chats/${chatId}`);
    await composer(page).fill('half-written\nanswer');
    await page.reload();
    await page.getByTestId('chat-heading').filter({ hasText: 'Keep my place' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/chats/${chatId}`);
    await messageWith(page, 'Something to answer').waitFor();
    await expect(composer(page).inputValue()).resolves.toBe('half-written\nanswer');
    // Nothing was sent.
    expect((await allMessages(relay, chatId)).map((m) => m.role)).toEqual(['agent']);
  });
  it("shows a change made elsewhere while the page's first reads of the chat and of the inbox are on their way", async () => {
    // The race of a loaded machine: the service answered the page's first reads before the chat
    // was renamed elsewhere, and the rename's event came while those answers were still on their
    // way. They are held here (answered by the service at once, handed to the page at the end): the
    // page must show the new title, and keep it when the older answers land.
    const chatId = await seedChat(relay, { title: 'Before' });
    const paths = [`/api/v1/chats/${chatId}`, '/api/v1/chats'];
    let answers = 0;
    let bothAnswered!: () => void;
    const answered = new Promise<void>((resolve) => (bothAnswered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const delivered: Promise<unknown>[] = [];
    app = await openApp(holder.browser, relay, `/chats/${chatId}`, undefined, {
      onPage: async (page) => {
        for (const path of paths) {
          await page.route(
            (url) => url.pathname === path,
            async (route) => {
              const response = await route.fetch();
              if (++answers === paths.length) bothAnswered();
              await held;
              const fulfilled = route.fulfill({ response }).catch(() => undefined);
              delivered.push(fulfilled);
              await fulfilled;
            },
            { times: 1 },
          );
        }
      },
    });
    const { page } = app;
    const heading = page.getByTestId('chat-heading');
    const listed = page.getByTestId('chat-title');
    try {
      await answered;
      await apiOk(relay, 'PATCH', `/api/v1/chats/${chatId}`, { title: 'After' });
      await heading.filter({ hasText: 'After' }).waitFor({ timeout: 10_000 });
      await listed.filter({ hasText: 'After' }).waitFor({ timeout: 10_000 });
    } finally {
      release();
    }
    await Promise.all(delivered);
    // The held answers (the old title) have reached the page; give it a moment to show them.
    await page.waitForTimeout(500);
    await expect(heading.textContent()).resolves.toContain('After');
    const titles = await listed.allTextContents();
    expect(titles).toContain('After');
    expect(titles).not.toContain('Before');
  });
});
