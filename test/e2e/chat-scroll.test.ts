/**
 * A chat opens at its newest message (issue 33 item 13), also when it holds images: real PNGs of
 * different sizes uploaded through the API, text after them. The images' metadata and pixels
 * arrive after the messages have rendered and grow the history; the app keeps the bottom pinned
 * while the reader has not scrolled away, so once every image has loaded the last message is in
 * view, at 1280 and 375 wide, also when every image answer is held back. And a reader who scrolled
 * up is left where they are.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page, Route } from 'playwright-core';
import sharp from 'sharp';
import { screenshots, useBrowser } from './support/browser.js';
import { chatItem, messages, openApp, postMessage } from './support/app.js';
import { seedChat, useRelay } from './support/relay.js';

const relay = useRelay();
const holder = useBrowser();

const SIZES = [
  { width: 240, height: 900, color: '#2f6fb0' },
  { width: 1200, height: 300, color: '#b0442f' },
  { width: 640, height: 640, color: '#3f9a4c' },
  { width: 300, height: 1000, color: '#8a4fb8' },
];
const LAST = 'The last words, after every image.';
let chatId: string;

beforeAll(async () => {
  chatId = await seedChat(relay, { title: 'Pictures' });
  await postMessage(relay, chatId, 'Here come the pictures.');
  for (const [i, size] of SIZES.entries()) {
    const png = await sharp({ create: { width: size.width, height: size.height, channels: 3, background: size.color } })
      .png()
      .toBuffer();
    const media = await relay.api('POST', `/api/v1/chats/${chatId}/media`, {
      fileName: `picture-${i + 1}.png`,
      contentType: 'image/png',
      base64Data: png.toString('base64'),
      kind: 'image',
    });
    if (media.status !== 201) throw new Error(`uploading: ${media.status} ${media.text}`);
    const res = await relay.api('POST', `/api/v1/chats/${chatId}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: `Picture ${i + 1}, ${size.width}×${size.height}.`,
      trace: { mediaIds: [(media.body as { id: string }).id] },
    });
    if (res.status !== 201) throw new Error(`posting: ${res.status} ${res.text}`);
  }
  await postMessage(relay, chatId, 'That was all of them.', 'user');
  await postMessage(relay, chatId, LAST);
}, 60_000);

/** Every image of the history shown (decoded, its size known). */
async function imagesLoaded(page: Page): Promise<void> {
  await page.waitForFunction(
    (count) => {
      const images = [...document.querySelectorAll<HTMLImageElement>('.messages img')];
      return images.length === count && images.every((img) => img.complete && img.naturalHeight > 0);
    },
    SIZES.length,
    { timeout: 30_000 },
  );
}

/** Where the last message is against the history's visible area, and how far the history is from its bottom. */
function lastMessagePlace(page: Page) {
  return page.evaluate((text) => {
    const root = document.querySelector('.messages')!;
    const last = [...root.querySelectorAll('[data-testid="message"]')].at(-1)!;
    const a = last.getBoundingClientRect();
    const b = root.getBoundingClientRect();
    return {
      text: last.querySelector('[data-testid="message-body"]')?.textContent?.trim() === text,
      inView: a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5,
      fromBottom: Math.round(root.scrollHeight - root.scrollTop - root.clientHeight),
      overflows: root.scrollHeight > root.clientHeight,
    };
  }, LAST);
}

/**
 * Opens the chat at `width`: directly on a wide screen, from the list on a phone (as a person does).
 * `delayMs(n)`: how long the n-th image answer (metadata, thumbnail, original) is held back.
 */
async function openChat(width: number, delayMs: (n: number) => number) {
  const viewport = width >= 800 ? { width, height: 800 } : { width, height: 667 };
  let n = 0;
  const app = await openApp(holder.browser, relay, width >= 800 ? `/chats/${chatId}` : '/', viewport, {
    onPage: async (page) => {
      const hold = (route: Route) => {
        const ms = delayMs(n++);
        return ms ? void setTimeout(() => void route.continue(), ms) : void route.continue();
      };
      await page.route('**/api/v1/media/*', hold);
      await page.route('**/api/v1/files/**', hold);
    },
  });
  if (width < 800) await chatItem(app.page, chatId).getByRole('link').click();
  await messages(app.page).filter({ hasText: LAST }).waitFor();
  return app;
}

const nextFrames = (page: Page) =>
  page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));

describe('a chat with images opens at its newest message', () => {
  for (const width of [1280, 375]) {
    for (const delayMs of [0, 1500]) {
      it(`at ${width} wide, image answers ${delayMs ? `held ${delayMs} ms` : 'as they come'}`, async () => {
        const app = await openChat(width, () => delayMs);
        try {
          await imagesLoaded(app.page);
          // A frame for the last resize to be handled.
          await nextFrames(app.page);
          const place = await lastMessagePlace(app.page);
          expect(place).toEqual({ text: true, inView: true, fromBottom: 0, overflows: true });
          if (delayMs) await screenshots(app.page, `chat-images-at-bottom-${width}`);
        } finally {
          await app.close();
        }
      });
    }
  }

  it('a reader who scrolled up while the images load is left where they are', async () => {
    // One image answer comes 4 s after the others: the reader scrolls up in between.
    const app = await openChat(1280, (n) => (n === SIZES.length + 1 ? 4000 : 300));
    try {
      const { page } = app;
      await page.waitForFunction(() => {
        const root = document.querySelector('.messages')!;
        return root.scrollHeight > root.clientHeight + 200;
      });
      await page.mouse.move(800, 400);
      // The reader turns the wheel until they are at the top. One turn can end short of it: the
      // images above still loading grow the list, and the browser's scroll anchoring keeps what
      // is in view as they do (seen once in the headless shell: the top never reached in 30 s).
      for (let turn = 1; ; turn++) {
        await page.mouse.wheel(0, -5000);
        const atTop = await page
          .waitForFunction(() => document.querySelector('.messages')!.scrollTop === 0, undefined, { timeout: 1000 })
          .then(
            () => true,
            () => false,
          );
        if (atTop) break;
        if (turn === 10) throw new Error('ten turns of the wheel did not reach the top of the chat');
      }
      await imagesLoaded(page);
      await nextFrames(page);
      expect(await page.locator('.messages').evaluate((root) => root.scrollTop)).toBe(0);
      expect((await lastMessagePlace(page)).inView).toBe(false);
    } finally {
      await app.close();
    }
  });
});
