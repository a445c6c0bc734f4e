/**
 * Phones (issue 27 item 6), at 390×844 and 375×667: inbox and chat are separate screens with back
 * navigation (the app's back link and the browser's back button, focus returning to the chat's
 * item in the list); the composer stays in view when an on-screen keyboard takes the bottom of the
 * viewport; requests, menus and the account menu fit. Touch targets and sideways scrolling on every
 * screen are checked in screens.test.ts, in the same pass as axe.
 */
import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { SCREENSHOT_DIR, useBrowser } from './support/browser.js';
import { chatItem, composer, eventually, openApp } from './support/app.js';
import { useSeededScreens } from './support/screens.js';
import { PHONES, TAP } from './support/touch.js';

const { relay, seeded } = useSeededScreens();
const holder = useBrowser();

describe('on a phone', () => {
  it('inbox and chat are separate screens: the back link and the browser back button return to the list, focus on the chat', async () => {
    const app = await openApp(holder.browser, relay, '/', PHONES[0]);
    const { page } = app;
    try {
      const chats = page.getByRole('navigation', { name: 'Chats' });
      const item = chatItem(page, seeded.markdownChatId).getByRole('link');
      // Its preview is the markdown message as read, not as written ("## Deploy plan Steps, in **order**").
      await expect(chatItem(page, seeded.markdownChatId).getByTestId('chat-preview').textContent()).resolves.toMatch(
        /^Deploy plan Steps, in order: Build the release branch Run the checks Stage Time/,
      );
      for (const back of ['link', 'browser'] as const) {
        await item.click();
        const heading = page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' });
        await heading.waitFor();
        // Focus on the chat's heading (not the composer: no on-screen keyboard popping up), no ring around it.
        await eventually(() => heading.evaluate((el) => el === document.activeElement), true, 5_000);
        await expect(heading.evaluate((el) => getComputedStyle(el).outlineStyle)).resolves.toBe('none');
        await expect(chats.isVisible()).resolves.toBe(false);
        if (back === 'link') await page.getByRole('link', { name: 'Back to chats' }).click();
        else await page.goBack();
        await chats.waitFor();
        expect(new URL(page.url()).pathname).toBe('/');
        await expect(page.getByRole('main').isVisible()).resolves.toBe(false);
        // Focus comes back to the chat that was open, so the list is not read again from the top.
        await eventually(() => item.evaluate((el) => el === document.activeElement), true, 5_000);
      }
      // Loaded at the chat, the heading has focus too, without a focus ring: it is no control.
      await page.goto(`${relay.url}/chats/${seeded.markdownChatId}`);
      const heading = page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' });
      await eventually(() => heading.evaluate((el) => el === document.activeElement), true, 5_000);
      await expect(heading.evaluate((el) => getComputedStyle(el).outlineStyle)).resolves.toBe('none');
    } finally {
      await app.close();
    }
  });

  it('the message box has the width of the screen, the attach, voice and Send buttons in a row under it (issue 33 item 17)', async () => {
    for (const viewport of PHONES) {
      // Opened from the list: on a phone the chat screen hides the header and its connection status.
      const app = await openApp(holder.browser, relay, '/', viewport);
      const { page } = app;
      try {
        await chatItem(page, seeded.markdownChatId).getByRole('link').click();
        await page.getByRole('log', { name: 'Messages' }).locator('pre code').waitFor();
        const box = (await composer(page).boundingBox())!;
        expect([viewport.width, box.width >= 240]).toEqual([viewport.width, true]);
        const buttons = ['Attach files', 'Record voice note', 'Send'].map((name) => page.getByRole('button', { name }));
        const boxes = await Promise.all(buttons.map(async (b) => (await b.boundingBox())!));
        for (const b of boxes) {
          // Under the message box, each a whole touch target inside the screen.
          expect([b.y >= box.y + box.height, b.width >= TAP - 0.5, b.height >= TAP - 0.5]).toEqual([true, true, true]);
          expect(b.x + b.width).toBeLessThanOrEqual(viewport.width);
        }
        // One row: attach and voice at the left, Send at the right end.
        expect(new Set(boxes.map((b) => Math.round(b.y))).size).toBe(1);
        expect(boxes[0]!.x).toBeLessThan(boxes[1]!.x);
        expect(boxes[2]!.x).toBeGreaterThan(boxes[1]!.x + boxes[1]!.width);
        await page.screenshot({ path: join(SCREENSHOT_DIR, `phone-composer-${viewport.width}.png`) });
      } finally {
        await app.close();
      }
    }
    // On a wide screen they stay in the message box's row.
    const app = await openApp(holder.browser, relay, `/chats/${seeded.markdownChatId}`);
    try {
      const box = (await composer(app.page).boundingBox())!;
      const send = (await app.page.getByRole('button', { name: 'Send' }).boundingBox())!;
      expect(send.y).toBeLessThan(box.y + box.height);
      expect(box.width).toBeGreaterThan(600);
      await app.page.screenshot({ path: join(SCREENSHOT_DIR, 'phone-composer-1280.png') });
    } finally {
      await app.close();
    }
  });

  it('the composer stays in view when an on-screen keyboard takes the bottom of the screen', async () => {
    for (const viewport of PHONES) {
      // Opened from the list: on a phone the chat screen hides the header and its connection status.
      const app = await openApp(holder.browser, relay, '/', viewport);
      const { page } = app;
      try {
        await chatItem(page, seeded.markdownChatId).getByRole('link').click();
        await page.getByRole('log', { name: 'Messages' }).locator('pre code').waitFor();
        await composer(page).click();
        // interactive-widget=resizes-content: the keyboard shrinks the layout viewport (about 40% of it).
        const keyboard = Math.round(viewport.height * 0.4);
        await page.setViewportSize({ width: viewport.width, height: viewport.height - keyboard });
        const height = viewport.height - keyboard;
        for (const control of [composer(page), page.getByRole('button', { name: 'Send' })]) {
          const box = (await control.boundingBox())!;
          expect([viewport.width, box.y >= 0, box.y + box.height <= height]).toEqual([viewport.width, true, true]);
        }
        await expect(composer(page).evaluate((el) => el === document.activeElement)).resolves.toBe(true);
        // The chat's heading is still at the top: the frame shrank, it did not scroll away.
        const heading = (await page.getByTestId('chat-heading').boundingBox())!;
        expect(heading.y).toBeGreaterThanOrEqual(0);
      } finally {
        await app.close();
      }
    }
  });
  it('pending requests fold into a bar "N pending requests" that opens them, the form\'s submit button within reach', async () => {
    for (const viewport of PHONES) {
      const app = await openApp(holder.browser, relay, '/', viewport);
      const { page } = app;
      try {
        await chatItem(page, seeded.requestsChatId).getByRole('link').click();
        const region = page.getByRole('region', { name: 'Pending requests' });
        const bar = region.getByRole('button', { name: '4 pending requests' });
        await bar.waitFor();
        await expect(bar.getAttribute('aria-expanded')).resolves.toBe('false');
        await expect(region.getByTestId('request').first().isVisible()).resolves.toBe(false);
        // Folded, the requests take one bar's height (44 px and its padding); the chat keeps the rest.
        const folded = (await region.boundingBox())!;
        expect(folded.height).toBeLessThanOrEqual(64);

        await bar.click();
        await expect(bar.getAttribute('aria-expanded')).resolves.toBe('true');
        const submit = region.getByRole('button', { name: 'Ship it' });
        await submit.scrollIntoViewIfNeeded();
        const box = (await submit.boundingBox())!;
        const composerBox = (await composer(page).boundingBox())!;
        // In view, above the composer, not under it.
        expect([box.y >= 0, box.y + box.height <= composerBox.y]).toEqual([true, true]);
        // Open, the requests have the room: at least half the screen.
        const open = (await region.boundingBox())!;
        expect(open.height).toBeGreaterThan(viewport.height * 0.5);
      } finally {
        await app.close();
      }
    }
  });
  it('the chat actions menu: buttons as wide as the menu; it closes when Tags opens its dialog', async () => {
    const app = await openApp(holder.browser, relay, '/', PHONES[1]);
    const { page } = app;
    try {
      await chatItem(page, seeded.markdownChatId).getByRole('link').click();
      await page.getByRole('button', { name: 'Chat actions' }).click();
      const toolbar = page.getByRole('toolbar', { name: 'Chat actions' });
      const menu = (await toolbar.boundingBox())!;
      for (const name of ['Rename', 'Unpin', 'Tags']) {
        const button = (await toolbar.getByRole('button', { name, exact: true }).boundingBox())!;
        // The menu's padding (8 px) and border (1 px) each side.
        expect([name, Math.round(button.width)]).toEqual([name, Math.round(menu.width - 18)]);
      }
      await toolbar.getByRole('button', { name: 'Tags', exact: true }).click();
      await page.getByRole('dialog', { name: 'Tags' }).waitFor();
      await expect(page.getByRole('button', { name: 'Chat actions' }).getAttribute('aria-expanded')).resolves.toBe(
        'false',
      );
      await expect(toolbar.getByRole('button', { name: 'Rename' }).isVisible()).resolves.toBe(false);
    } finally {
      await app.close();
    }
  });

  it('the Account menu shows the Notifications switch with its label', async () => {
    const app = await openApp(holder.browser, relay, '/', PHONES[1]);
    const { page } = app;
    try {
      await page.getByRole('button', { name: 'Account' }).click();
      const label = page.getByTestId('notifications').getByText('Notifications', { exact: true });
      await label.waitFor();
      const box = (await label.boundingBox())!;
      expect(box.width).toBeGreaterThan(40);
    } finally {
      await app.close();
    }
  });
});
