/**
 * Quick tag edits are not lost (issue 33 item 9). PATCH /chats/{id} replaces the whole tag list
 * (§5.3.4), so the app queues a chat's edits and sends each as a change to the freshest list it can
 * read: a second edit made before the first save answers keeps the first; a removal made while an
 * addition is on its way removes only what was asked; and a second tab that did not hear of the
 * first tab's change (its live stream down) still keeps it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import { eventually, getChat, openApp, seedChat } from './support/app.js';
import type { OpenApp } from './support/app.js';
import { useRelay } from './support/relay.js';

const relay = useRelay();
const holder = useBrowser();
const apps: OpenApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function open(chatId: string, options: { liveEvents?: boolean } = {}): Promise<Page> {
  const app = await openApp(holder.browser, relay, `/chats/${chatId}`, undefined, options);
  apps.push(app);
  return app.page;
}

async function tagsDialog(page: Page): Promise<Locator> {
  await page.getByRole('toolbar', { name: 'Chat actions' }).getByRole('button', { name: 'Tags', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'Tags' });
  await dialog.waitFor();
  return dialog;
}

async function addTag(dialog: Locator, tag: string): Promise<void> {
  const box = dialog.getByRole('textbox', { name: 'Add tag' });
  await box.fill(tag);
  await box.press('Enter');
}

/** Every PATCH of the chat reaches the service `ms` late: the page's saves overlap. Returns how many were sent. */
async function slowPatches(page: Page, chatId: string, ms: number): Promise<{ sent: number }> {
  const count = { sent: 0 };
  await page.route(`**/api/v1/chats/${chatId}`, async (route) => {
    if (route.request().method() !== 'PATCH') return route.fallback();
    count.sent++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    await route.continue();
  });
  return count;
}

const tags = async (chatId: string): Promise<string[]> => ((await getChat(relay, chatId)).tags as string[]).sort();
const shown = (page: Page) => page.getByTestId('chat-tag').allTextContents();

describe('quick tag edits', () => {
  it('two tags added quickly (the second before the first save answers): both are saved', async () => {
    const chatId = await seedChat(relay, { title: 'Two quick tags' });
    const page = await open(chatId);
    const patches = await slowPatches(page, chatId, 800);
    const dialog = await tagsDialog(page);
    await addTag(dialog, 'alpha');
    await addTag(dialog, 'beta');
    // Both show at once, while the saves are on their way.
    await dialog.getByRole('button', { name: 'Remove tag alpha' }).waitFor();
    await dialog.getByRole('button', { name: 'Remove tag beta' }).waitFor();
    expect(patches.sent).toBeLessThanOrEqual(1);
    await screenshots(page, 'tags-saving');
    await eventually(() => tags(chatId), ['alpha', 'beta']);
    await eventually(async () => (await shown(page)).sort(), ['alpha', 'beta']);
    // Nothing else arrives later to undo it.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(tags(chatId)).resolves.toEqual(['alpha', 'beta']);
  });

  it('a tag removed while another is being added: the result is exactly what was asked', async () => {
    const chatId = await seedChat(relay, { title: 'Remove while adding', tags: ['keep', 'drop'] });
    const page = await open(chatId);
    await slowPatches(page, chatId, 800);
    const dialog = await tagsDialog(page);
    await addTag(dialog, 'new');
    await dialog.getByRole('button', { name: 'Remove tag drop' }).click();
    await dialog.getByRole('button', { name: 'Remove tag drop' }).waitFor({ state: 'detached' });
    await dialog.getByRole('button', { name: 'Remove tag new' }).waitFor();
    await eventually(() => tags(chatId), ['keep', 'new']);
    await eventually(async () => (await shown(page)).sort(), ['keep', 'new']);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(tags(chatId)).resolves.toEqual(['keep', 'new']);
  });

  it('two tabs editing the same chat keep each other’s change, also when one did not hear of the other’s', async () => {
    const chatId = await seedChat(relay, { title: 'Two tabs', tags: ['shared'] });
    const first = await open(chatId);
    // The second tab's live stream is down: it never hears of the first tab's change.
    const second = await open(chatId, { liveEvents: false });
    const firstDialog = await tagsDialog(first);
    const secondDialog = await tagsDialog(second);
    await secondDialog.getByRole('button', { name: 'Remove tag shared' }).waitFor();

    await addTag(firstDialog, 'from-first');
    await eventually(() => tags(chatId), ['from-first', 'shared']);
    // The second tab still shows the list as it read it, and edits from there.
    await addTag(secondDialog, 'from-second');
    await eventually(() => tags(chatId), ['from-first', 'from-second', 'shared']);
    await secondDialog.getByRole('button', { name: 'Remove tag shared' }).click();
    await eventually(() => tags(chatId), ['from-first', 'from-second']);
    // The first tab (live) shows the second's changes; the second shows the first's since its saves.
    await eventually(async () => (await shown(first)).sort(), ['from-first', 'from-second']);
    await eventually(async () => (await shown(second)).sort(), ['from-first', 'from-second']);
  });
});
