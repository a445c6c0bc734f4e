/**
 * Accessibility (issue 27 item 7), the keyboard alone: sending a message, answering each request
 * type and moving between chats with Tab, Shift+Tab, Enter, Space and the arrow keys, no mouse,
 * focus always visible. axe-core on every screen is in screens.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { useBrowser } from './support/browser.js';
import { seedChat } from './support/relay.js';
import { allMessages, chatItem, composer, createRequest, eventually, getRequest, openApp } from './support/app.js';
import { CHOICE_ONE, CHOICE_SEVERAL, FORM, TEXT_INPUT, useSeededScreens } from './support/screens.js';

const { relay, seeded } = useSeededScreens();
const holder = useBrowser();

// ---- The keyboard alone ------------------------------------------------------------------------

/** What has focus: a description, and whether it shows a focus indicator (outline or ring). */
function focused(page: Page): Promise<{ what: string; visible: boolean; inView: boolean }> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { what: 'body', visible: false, inView: false };
    const style = getComputedStyle(el);
    const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    const ring = style.boxShadow !== 'none';
    const box = el.getBoundingClientRect();
    const inView = box.bottom > 0 && box.top < innerHeight && box.right > 0 && box.left < innerWidth;
    const name = (el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40);
    const type = el instanceof HTMLInputElement ? `[type=${el.type}]` : '';
    // Native media controls draw their own focus ring inside the element (the UA's shadow tree).
    const native = el.matches('audio[controls], video[controls]');
    return { what: `${el.tagName.toLowerCase()}${type} "${name}"`, visible: outline || ring || native, inView };
  });
}

/**
 * Presses Tab (or Shift+Tab) until `target` has focus, at most `max` times; every element that
 * takes focus on the way shows a visible focus indicator and is in view.
 */
async function tabTo(page: Page, target: Locator, options: { back?: boolean; max?: number } = {}): Promise<void> {
  const key = options.back ? 'Shift+Tab' : 'Tab';
  const unseen: string[] = [];
  for (let i = 0; i < (options.max ?? 60); i++) {
    await page.keyboard.press(key);
    const now = await focused(page);
    // 'body': Tab went past the end of the page (to the browser's own controls) and comes round.
    if (now.what !== 'body' && (!now.visible || !now.inView))
      unseen.push(`${now.what}${now.visible ? '' : ' (no focus indicator)'}${now.inView ? '' : ' (out of view)'}`);
    if (await target.evaluate((el) => el === document.activeElement)) {
      expect(unseen).toEqual([]);
      return;
    }
  }
  throw new Error(`${key} never reached ${String(target)}; passed ${unseen.join(', ')}`);
}

const hasFocus = (locator: Locator) => locator.evaluate((el) => el === document.activeElement);

describe('the keyboard alone', () => {
  it('moves between chats (skip link, arrows, Enter) and sends a message, focus visible all the way', async () => {
    const app = await openApp(holder.browser, relay, '/', { width: 1280, height: 800 });
    const { page } = app;
    try {
      const list = page.getByRole('navigation', { name: 'Chats' });
      await list.getByTestId('chat-item').first().waitFor();
      // The first Tab stop skips the header and the search to the chats.
      await tabTo(page, page.getByRole('link', { name: 'Skip to chats' }), { max: 1 });
      await page.keyboard.press('Enter');
      const first = chatItem(page, seeded.markdownChatId).getByRole('link');
      await eventually(() => hasFocus(first), true);
      // Down and Up move along the list; Enter opens the chat with focus in its message box.
      await page.keyboard.press('ArrowDown');
      await eventually(() => hasFocus(list.getByTestId('chat-item').nth(1).getByRole('link')), true);
      await page.keyboard.press('ArrowUp');
      await eventually(() => hasFocus(first), true);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      const second = await list.getByTestId('chat-item').nth(1).getAttribute('data-chat-id');
      await page.waitForURL(`**/chats/${second}`);
      await eventually(() => hasFocus(composer(page)), true);
      // Shift+Tab walks back to the list (through the chat's header), Enter opens the first chat.
      await tabTo(page, first, { back: true });
      await page.keyboard.press('Enter');
      await page.waitForURL(`**/chats/${seeded.markdownChatId}`);
      await eventually(() => hasFocus(composer(page)), true);
      await page.keyboard.type('Sent from the keyboard');
      await page.keyboard.press('Enter');
      await eventually(
        async () =>
          (await allMessages(relay, seeded.markdownChatId)).some((m) => m.content_final === 'Sent from the keyboard'),
        true,
      );
    } finally {
      await app.close();
    }
  });

  it('answers each request type: choice of one and of several, text, a form with every field type', async () => {
    const chatId = await seedChat(relay, { title: 'Keyboard requests' });
    const ids: Record<string, string> = {};
    for (const [key, request] of Object.entries({
      one: CHOICE_ONE,
      several: CHOICE_SEVERAL,
      text: TEXT_INPUT,
      form: FORM,
    }))
      ids[key] = (await createRequest(relay, chatId, request)).id;
    const app = await openApp(holder.browser, relay, '/', { width: 1280, height: 800 });
    const { page } = app;
    try {
      await tabTo(page, page.getByRole('link', { name: 'Skip to chats' }), { max: 1 });
      await page.keyboard.press('Enter');
      await tabTo(page, chatItem(page, chatId).getByRole('link'));
      await page.keyboard.press('Enter');
      await eventually(() => hasFocus(composer(page)), true);
      const region = page.getByRole('region', { name: 'Pending requests' });
      const card = (key: string) => region.locator(`[data-testid="request"][data-request-id="${ids[key]}"]`);
      const status = (key: string) => getRequest(relay, chatId, ids[key]!);

      // Choice of one: Space on the option.
      // The requests sit above the message box: Shift+Tab goes back to them.
      await tabTo(page, card('one').getByRole('button', { name: 'Wait' }), { back: true });
      await page.keyboard.press('Space');
      await card('one').waitFor({ state: 'detached' });
      expect((await status('one')).resolution_payload).toEqual({ selectedOptionIds: ['no'] });

      // Choice of several: Space checks, Enter on the submit button.
      await tabTo(page, card('several').getByRole('checkbox', { name: 'EU' }));
      await page.keyboard.press('Space');
      await tabTo(page, card('several').getByRole('checkbox', { name: 'AP' }));
      await page.keyboard.press('Space');
      await tabTo(page, card('several').getByRole('button', { name: 'Submit' }));
      await page.keyboard.press('Enter');
      await card('several').waitFor({ state: 'detached' });
      expect((await status('several')).resolution_payload).toEqual({ selectedOptionIds: ['eu', 'ap'] });

      // Text: typed, then Tab to Submit.
      await tabTo(page, card('text').getByLabel('Answer'));
      await page.keyboard.type('Aurora');
      await tabTo(page, card('text').getByRole('button', { name: 'Submit' }), { max: 1 });
      await page.keyboard.press('Enter');
      await card('text').waitFor({ state: 'detached' });
      expect((await status('text')).resolution_payload).toEqual({ text: 'Aurora' });

      // The form: each field in Tab order, by its keys.
      const form = card('form');
      await tabTo(page, form.getByLabel('Recipient'));
      await page.keyboard.type('Ada Lovelace');
      await tabTo(page, form.getByLabel('Delivery notes'), { max: 1 });
      await page.keyboard.type('Ring twice.');
      await tabTo(page, form.getByLabel('Speed'), { max: 1 });
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      await tabTo(page, form.getByRole('checkbox', { name: 'Gift wrap' }), { max: 1 });
      await page.keyboard.press('Space');
      await tabTo(page, form.getByRole('checkbox', { name: 'Card' }), { max: 2 });
      await page.keyboard.press('Space');
      await tabTo(page, form.getByRole('checkbox', { name: 'Signature on delivery' }), { max: 1 });
      await page.keyboard.press('Space');
      await tabTo(page, form.getByLabel('Delivery day'), { max: 1 });
      await page.keyboard.type('12242026');
      await tabTo(page, form.getByRole('button', { name: 'Ship it' }));
      await page.keyboard.press('Enter');
      await form.waitFor({ state: 'detached' });
      expect((await status('form')).resolution_payload).toEqual({
        values: {
          recipient: 'Ada Lovelace',
          notes: 'Ring twice.',
          speed: 'Express',
          extras: ['Gift wrap', 'Card'],
          signature: true,
          day: '2026-12-24',
        },
      });
    } finally {
      await app.close();
    }
  });
});
