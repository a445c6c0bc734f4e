/**
 * Text from agents and people is isolated, and the instance's name is the app's (issue 33 items 11
 * and 18): an agent name holding a right-to-left override (U+202E) does not reverse the model name
 * printed beside it, a chat title holding one does not flip what follows it (in the list, and in the
 * tab's title, where it is wrapped in U+2068…U+2069), a malformed path (`/chats/%E0%A4%A`) shows the
 * not-found view without a page error, and `appName` from GET /config is the header and the title.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import { chatItem, openApp, postMessage, seedChat } from './support/app.js';
import type { OpenApp } from './support/app.js';
import { E2E_CONFIG, useRelay } from './support/relay.js';

const RLO = '\u202E';
const APP_NAME = 'Harbor Relay';
const relay = useRelay({
  config: {
    appName: APP_NAME,
    agents: [{ ...E2E_CONFIG.agents[0], name: `Helper${RLO}evil` }, E2E_CONFIG.agents[1]],
    models: [{ id: 'model-a', name: 'Sonnet Large', description: '' }, E2E_CONFIG.models[1]],
  },
});
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * Whether `text`, found in a text node under `selector`, is drawn left to right as written: its
 * first character's box lies left of its last character's box (a reversed run draws them the other way).
 */
function drawnInOrder(page: Page, selector: string, text: string): Promise<boolean> {
  return page.evaluate(
    ({ selector, text }) => {
      const root = document.querySelector(selector);
      if (!root) throw new Error(`no ${selector}`);
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const at = node.textContent!.indexOf(text);
        if (at === -1) continue;
        const box = (offset: number) => {
          const range = document.createRange();
          range.setStart(node, offset);
          range.setEnd(node, offset + 1);
          return range.getBoundingClientRect();
        };
        return box(at).left < box(at + text.length - 1).left;
      }
      throw new Error(`"${text}" is not under ${selector}`);
    },
    { selector, text },
  );
}

describe('isolation of provided text, and the instance name', () => {
  it('appName from GET /config is the header and the page title (also with a chat open)', async () => {
    const chatId = await seedChat(relay, { title: 'Weekly plan' });
    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await expect(page.getByTestId('app-name').textContent()).resolves.toBe(APP_NAME);
    await expect(page.locator('header.topbar').textContent()).resolves.not.toContain('Chat relay');
    await expect(page.title()).resolves.toBe(APP_NAME);
    await chatItem(page, chatId).getByRole('link').click();
    await page.getByTestId('chat-heading').filter({ hasText: 'Weekly plan' }).waitFor();
    await expect(page.title()).resolves.toBe(`\u2068Weekly plan\u2069 · ${APP_NAME}`);
    await page.goBack();
    await page.waitForFunction((name) => document.title === name, APP_NAME);
  });

  it('an agent name with U+202E does not reverse the model name beside it; a title with one does not flip what follows', async () => {
    const chatId = await seedChat(relay, { title: `${RLO}Quarterly numbers` });
    await postMessage(relay, chatId, 'The numbers are in.');
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await page.getByTestId('chat-heading').filter({ hasText: 'Quarterly numbers' }).waitFor();
    // The agent's own name is drawn as the agent wrote it (reversed after the override) ...
    await expect(drawnInOrder(page, '.chat-view .chat-header', 'evil')).resolves.toBe(false);
    // ... but the model name printed after it reads in logical order.
    await expect(drawnInOrder(page, '.chat-view .chat-header', 'Sonnet Large')).resolves.toBe(true);
    // The message's sender line: the agent name, then the time, in order.
    const time = await page.getByTestId('message').locator('time').first().textContent();
    await expect(drawnInOrder(page, '[data-testid="message"] .message-meta', time!)).resolves.toBe(true);
    // The list: the title, then its time, in order; the tab's title isolates the chat title.
    const when = await chatItem(page, chatId).locator('time').textContent();
    await expect(drawnInOrder(page, `[data-chat-id="${chatId}"]`, when!)).resolves.toBe(true);
    await expect(page.title()).resolves.toBe(`\u2068${RLO}Quarterly numbers\u2069 · ${APP_NAME}`);
    await screenshots(page, 'isolation-chat');
  });

  it('a malformed path (/chats/%E0%A4%A) and an unknown one show the not-found view, with no page error', async () => {
    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${relay.url}/chats/%E0%A4%A`);
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
    await page.getByTestId('chat-list').waitFor();
    await screenshots(page, 'not-found');
    await page.goto(`${relay.url}/no/such/place`);
    await page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Back to chats' }).click();
    await page.getByText('Pick a chat, or start a new one.').waitFor();
    expect(errors).toEqual([]);
  });
});
