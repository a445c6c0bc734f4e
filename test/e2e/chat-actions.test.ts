/**
 * A chat's actions from its toolbar (issue 26 item 4): rename, pin and unpin, archive and unarchive,
 * tags with suggestions from the catalog, mute and unmute, mark unread; and a new chat made with
 * the agent and model pickers and a first message. Each checks what the person sees (heading, inbox
 * order and badges, the view the chat is in) and the server's state through the API.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { useBrowser } from './support/browser.js';
import {
  allMessages,
  apiOk,
  chatItem,
  eventually,
  getChat,
  listedIds,
  messageWith,
  openApp,
  postMessage,
  seedChat,
} from './support/app.js';
import type { OpenApp } from './support/app.js';
import { E2E_CONFIG, useRelay } from './support/relay.js';

const relay = useRelay();
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const action = (page: Page, name: string) =>
  page.getByRole('toolbar', { name: 'Chat actions' }).getByRole('button', { name, exact: true });
const field = (chatId: string, name: string) => getChat(relay, chatId).then((c) => c[name]);

describe('chat actions', () => {
  it('rename: the heading and the inbox show the new title; the server has it as a manual title', async () => {
    const chatId = await seedChat(relay, { firstMessage: 'A title from the first message' });
    expect(await field(chatId, 'title_source')).toBe('default');
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await page.getByTestId('chat-heading').filter({ hasText: 'A title from the first message' }).waitFor();

    await action(page, 'Rename').click();
    const title = page.getByRole('textbox', { name: 'Chat title' });
    await title.fill('Renamed by hand');
    await title.press('Enter');
    await page
      .getByTestId('chat-heading')
      .filter({ hasText: /^Renamed by hand$/ })
      .waitFor();
    await chatItem(page, chatId)
      .getByTestId('chat-title')
      .filter({ hasText: /^Renamed by hand$/ })
      .waitFor();
    // Shown at once (an optimistic update); the form closes when the service has it.
    await title.waitFor({ state: 'detached' });
    const chat = await getChat(relay, chatId);
    expect([chat.title, chat.title_source]).toEqual(['Renamed by hand', 'manual']);
    // The title isolated (U+2068…U+2069), then the instance's appName (the contract's default here).
    await expect(page.title()).resolves.toBe('\u2068Renamed by hand\u2069 · OpenGram');
  });

  it('pin and unpin move the chat to the top of the inbox and back', async () => {
    const quiet = await seedChat(relay, { title: 'Quiet chat' });
    await postMessage(relay, quiet, 'old news');
    const busy = await seedChat(relay, { title: 'Busy chat' });
    await postMessage(relay, busy, 'new news');
    app = await openApp(holder.browser, relay, `/chats/${quiet}`);
    const { page } = app;
    await chatItem(page, busy).waitFor();
    const position = async (id: string) => (await listedIds(page)).indexOf(id);
    expect(await position(busy)).toBeLessThan(await position(quiet));

    await action(page, 'Pin').click();
    await action(page, 'Unpin').waitFor();
    await eventually(() => listedIds(page).then((ids) => ids[0]), quiet);
    await expect(chatItem(page, quiet).getAttribute('data-pinned')).resolves.toBe('true');
    await chatItem(page, quiet).getByTestId('pinned-marker').waitFor();
    // The page shows it at once (optimistic); the service has it when the PATCH lands.
    await eventually(() => field(quiet, 'pinned'), true);

    await action(page, 'Unpin').click();
    await action(page, 'Pin').waitFor();
    await eventually(async () => (await position(busy)) < (await position(quiet)), true);
    await expect(chatItem(page, quiet).getAttribute('data-pinned')).resolves.toBe('false');
    // The page shows it at once (optimistic); the service has it when the PATCH lands.
    await eventually(() => field(quiet, 'pinned'), false);
  });

  it('archive and unarchive move the open chat between the inbox and the archived view', async () => {
    const chatId = await seedChat(relay, { title: 'To the archive' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await chatItem(page, chatId).waitFor();

    await action(page, 'Archive').click();
    await chatItem(page, chatId).waitFor({ state: 'detached' });
    await action(page, 'Unarchive').waitFor();
    expect(await field(chatId, 'is_archived')).toBe(true);

    await page.getByRole('link', { name: 'Archived', exact: true }).click();
    await chatItem(page, chatId).waitFor();
    await page.getByRole('link', { name: /^To the archive/ }).click();
    await action(page, 'Unarchive').click();
    await chatItem(page, chatId).waitFor({ state: 'detached' });
    await action(page, 'Archive').waitFor();
    expect(await field(chatId, 'is_archived')).toBe(false);
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await chatItem(page, chatId).waitFor();
  });

  it('tags: an existing tag is suggested from the catalog and added from the suggestion; a typed one added; one removed', async () => {
    await seedChat(relay, { title: 'Has the tag already', tags: ['finance-q3'] });
    const chatId = await seedChat(relay, { title: 'Needs tags' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await action(page, 'Tags').click();
    const dialog = page.getByRole('dialog', { name: 'Tags' });
    await dialog.waitFor();

    await dialog.getByRole('textbox', { name: 'Add tag' }).fill('fin');
    const suggestion = dialog.getByTestId('tag-suggestion').filter({ hasText: /^finance-q3$/ });
    await suggestion.click();
    await page
      .getByTestId('chat-tag')
      .filter({ hasText: /^finance-q3$/ })
      .waitFor();
    await eventually(() => field(chatId, 'tags'), ['finance-q3']);
    // Once on the chat, it is no longer suggested.
    await dialog.getByRole('textbox', { name: 'Add tag' }).fill('fin');
    await dialog.getByRole('button', { name: 'Remove tag finance-q3' }).waitFor();
    await expect(
      dialog
        .getByTestId('tag-suggestion')
        .filter({ hasText: /^finance-q3$/ })
        .count(),
    ).resolves.toBe(0);

    await dialog.getByRole('textbox', { name: 'Add tag' }).fill('urgent');
    await dialog.getByRole('textbox', { name: 'Add tag' }).press('Enter');
    await dialog.getByRole('button', { name: 'Remove tag urgent' }).waitFor();
    await eventually(() => field(chatId, 'tags'), ['finance-q3', 'urgent']);

    await dialog.getByRole('button', { name: 'Remove tag finance-q3' }).click();
    await dialog.getByRole('button', { name: 'Remove tag finance-q3' }).waitFor({ state: 'detached' });
    await eventually(() => field(chatId, 'tags'), ['urgent']);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect(page.getByTestId('chat-tag').allTextContents()).resolves.toEqual(['urgent']);
  });

  it('mute and unmute set the chat’s notifications_muted', async () => {
    const chatId = await seedChat(relay, { title: 'Noisy chat' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await action(page, 'Mute').click();
    await action(page, 'Unmute').waitFor();
    // The page shows it at once (optimistic); the service has it when the PATCH lands.
    await eventually(() => field(chatId, 'notifications_muted'), true);
    await chatItem(page, chatId).getByLabel('Muted').waitFor();
    await action(page, 'Unmute').click();
    await action(page, 'Mute').waitFor();
    // The page shows it at once (optimistic); the service has it when the PATCH lands.
    await eventually(() => field(chatId, 'notifications_muted'), false);
    await chatItem(page, chatId).getByLabel('Muted').waitFor({ state: 'detached' });
  });

  it('mark unread: back to the inbox, the badge shows, the server has no last_read_at', async () => {
    const chatId = await seedChat(relay, { title: 'Read it later' });
    await postMessage(relay, chatId, 'Something to read');
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await messageWith(page, 'Something to read').waitFor();
    // Opening it read it.
    await eventually(() => field(chatId, 'unread_count'), 0);
    await chatItem(page, chatId).getByTestId('unread-badge').waitFor({ state: 'detached' });

    const markReads: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().endsWith(`/chats/${chatId}/mark-read`)) markReads.push(r.url());
    });
    await action(page, 'Mark unread').click();
    await page.waitForURL(`${relay.url}/`);
    await chatItem(page, chatId).getByTestId('unread-badge').filter({ hasText: /^1$/ }).waitFor();
    const chat = await getChat(relay, chatId);
    expect([chat.last_read_at, chat.unread_count]).toEqual([null, 1]);
    // Leaving the chat did not read it again on the way out.
    expect(markReads).toEqual([]);
  });

  it('new chat: agent and model pickers, a title and a first message; the chat opens and the server has them', async () => {
    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await page.getByRole('link', { name: 'New chat' }).click();
    await page.waitForURL(`${relay.url}/new`);
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    const agent = page.getByRole('combobox', { name: 'Agent', exact: true });
    const model = page.getByRole('combobox', { name: 'Model', exact: true });
    await expect(agent.locator('option').allTextContents()).resolves.toEqual(E2E_CONFIG.agents.map((a) => a.name));
    await expect(model.locator('option').allTextContents()).resolves.toEqual(E2E_CONFIG.models.map((m) => m.name));
    await agent.selectOption({ label: 'Coder' });
    await model.selectOption({ label: 'Model B' });
    await page.getByRole('textbox', { name: 'Title' }).fill('Pairing session');
    await page.getByRole('textbox', { name: 'First message' }).fill('Let us refactor\nthe parser.');
    await page.getByRole('button', { name: 'Create chat' }).click();

    await page.waitForURL(/\/chats\/[^/]+$/);
    const chatId = decodeURIComponent(new URL(page.url()).pathname.split('/')[2]!);
    await page
      .getByTestId('chat-heading')
      .filter({ hasText: /^Pairing session$/ })
      .waitFor();
    await messageWith(page, 'Let us refactor').waitFor();
    await chatItem(page, chatId).waitFor();
    const chat = await getChat(relay, chatId);
    expect({ agents: chat.agent_ids, model: chat.model_id, title: chat.title }).toEqual({
      agents: ['coder'],
      model: 'model-b',
      title: 'Pairing session',
    });
    const stored = await allMessages(relay, chatId);
    expect(stored.map((m) => [m.role, m.content_final])).toEqual([['user', 'Let us refactor\nthe parser.']]);
    // The server's config really offers both agents and models (the pickers are not guessing).
    const config = (await apiOk(relay, 'GET', '/api/v1/config')) as {
      agents: { id: string }[];
      models: { id: string }[];
    };
    expect(config.agents.map((a) => a.id)).toEqual(['assistant', 'coder']);
    expect(config.models.map((m) => m.id)).toEqual(['model-a', 'model-b']);
  });
});
