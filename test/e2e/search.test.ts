/**
 * Search and inbox filters in a real browser against `npm start` (issue 27 items 2 and 3):
 * the search box finds seeded titles and messages by the contract's scopes; a snippet shows the
 * message's markup as text and only the service's <mark> highlights as elements; a hit among the
 * oldest of 130 messages opens its chat with that message in view; more hits load by cursor; an
 * empty result says so and Escape clears. The inbox filters by tag and by agent through the URL
 * (a reload keeps them), and live updates respect them: a chat outside the filter that gets a
 * message stays out, a chat that loses the tag leaves. The Tags dialog adds a suggestion by
 * keyboard alone.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import { eventually } from './support/poll.js';
import { seedChat, useRelay } from './support/relay.js';
import type { Relay } from './support/relay.js';

// Seeding writes a few hundred messages from this one address: lift the per-IP write limit.
const relay = useRelay({ env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '100000' } });
const chromium = useBrowser();

async function post(relay: Relay, chatId: string, content: string, senderId = 'assistant'): Promise<string> {
  const res = await relay.api('POST', `/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId, content });
  if (res.status !== 201) throw new Error(`seeding a message: ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

/** The search index is written from the event log after the write: wait until it has them all. */
async function indexed(q: string, count: number): Promise<void> {
  for (;;) {
    const res = await relay.api('GET', `/api/v1/search?q=${encodeURIComponent(q)}&scope=messages&limit=100`);
    if (res.status !== 200) throw new Error(`search: ${res.status} ${res.text}`);
    if ((res.body as { messages: unknown[] }).messages.length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const ids = {} as Record<
  'deploy' | 'markup' | 'markdown' | 'long' | 'paging' | 'opsAssistant' | 'opsCoder' | 'miscCoder',
  string
>;
let narwhalId: string;
let page: Page;
const dialogs: string[] = [];

const searchBox = () => page.getByRole('searchbox', { name: 'Search' });
const results = () => page.getByTestId('search-results');
const messageHits = () => results().locator('[data-testid="search-hit"][data-kind="message"]');
const chatHits = () => results().locator('[data-testid="search-hit"][data-kind="chat"]');
const listedIds = () =>
  page
    .getByRole('navigation', { name: 'Chats' })
    .getByTestId('chat-item')
    .evaluateAll((items) => items.map((item) => item.getAttribute('data-chat-id')!).sort());
const apiIds = async (query: string) =>
  ((await relay.api('GET', `/api/v1/chats?archived=false&${query}`)).body as { data: { id: string }[] }).data
    .map((c) => c.id)
    .sort();

async function search(text: string): Promise<void> {
  await searchBox().fill(text);
  await searchBox().press('Enter');
  await results()
    .getByRole('status')
    .filter({ hasText: `for “${text}”` })
    .waitFor();
}

beforeAll(async () => {
  ids.deploy = await seedChat(relay, { title: 'Deploy plan', tags: ['ops'] });
  await post(relay, ids.deploy, 'We deploy the zebrafish build on Friday after the freeze.');
  ids.markup = await seedChat(relay, { title: 'Markup chat' });
  await post(relay, ids.markup, 'Do not run <script>alert(1)</script> or <b>bold</b> near quokka please');
  ids.markdown = await seedChat(relay, { title: 'Markdown chat' });
  await post(relay, ids.markdown, '# Hello ocelot\n\n- one\n- **two**\n\n```js\nconst ocelot = 1;\n```');
  ids.long = await seedChat(relay, { title: 'Long history' });
  narwhalId = await post(relay, ids.long, 'The narwhal migration plan is ready for review.');
  for (let i = 1; i <= 130; i += 10) {
    const batch = Array.from({ length: 10 }, (_, k) => i + k);
    await Promise.all(batch.map((n) => post(relay, ids.long, `Filler message number ${n} about nothing much.`)));
  }
  ids.paging = await seedChat(relay, { title: 'Paging' });
  await Promise.all(
    Array.from({ length: 25 }, (_, i) => post(relay, ids.paging, `Pelican report ${i + 1}: all quiet on the pier.`)),
  );
  ids.opsAssistant = await seedChat(relay, { title: 'Ops with assistant', tags: ['ops'] });
  ids.opsCoder = await seedChat(relay, { title: 'Ops with coder', tags: ['ops'], agentIds: ['coder'] });
  ids.miscCoder = await seedChat(relay, { title: 'Misc with coder', tags: ['misc'], agentIds: ['coder'] });
  await Promise.all([
    indexed('zebrafish', 1),
    indexed('quokka', 1),
    indexed('ocelot', 1),
    indexed('narwhal', 1),
    indexed('pelican', 25),
  ]);

  const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  // Any alert() would be a snippet's script running.
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Instance secret').fill(relay.secret!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('chat-item').first().waitFor();
}, 180_000);

describe('search', () => {
  it('finds titles and messages with the chosen scope, and says when nothing matches', async () => {
    await search('deploy');
    await chatHits().filter({ hasText: 'Deploy plan' }).waitFor();
    await messageHits().filter({ hasText: 'zebrafish' }).waitFor();
    expect(await page.getByTestId('chat-list').count()).toBe(0);
    await expect(results().getByRole('heading', { name: 'Chats' }).count()).resolves.toBe(1);
    await expect(results().getByRole('heading', { name: 'Messages' }).count()).resolves.toBe(1);
    // The title's match is highlighted too.
    expect(await chatHits().first().locator('mark').allTextContents()).toEqual(['Deploy']);

    await page.getByLabel('Search in').selectOption({ label: 'Chat titles' });
    await messageHits().first().waitFor({ state: 'detached' });
    expect(await chatHits().allTextContents()).toEqual(['Deploy plan']);
    await page.getByLabel('Search in').selectOption({ label: 'Messages' });
    await chatHits().first().waitFor({ state: 'detached' });
    expect(await messageHits().count()).toBe(1);
    await page.getByLabel('Search in').selectOption({ label: 'Everything' });

    // Typing alone (no Enter) searches after a pause.
    await searchBox().fill('xylophonezzz');
    await results().getByRole('status').filter({ hasText: 'No results for “xylophonezzz”.' }).waitFor();
    expect(await results().locator('[data-testid="search-hit"]').count()).toBe(0);

    // Escape clears the box and brings the chat list back.
    await searchBox().press('Escape');
    await page.getByTestId('chat-list').waitFor();
    expect(await searchBox().inputValue()).toBe('');
    expect(await results().count()).toBe(0);
  });

  it('shows a snippet’s markup as text and only the <mark> highlights as elements', async () => {
    await search('quokka');
    const snippet = messageHits().first().getByTestId('search-snippet');
    await snippet.waitFor();
    const dom = await snippet.evaluate((el) => ({
      text: el.textContent,
      elements: [...el.querySelectorAll('*')].map((e) => e.tagName),
      marks: [...el.querySelectorAll('mark')].map((e) => e.textContent),
    }));
    expect(dom.elements).toEqual(['MARK']);
    expect(dom.marks).toEqual(['quokka']);
    expect(dom.text).toContain('<script>alert(1)</script>');
    expect(dom.text).toContain('<b>bold</b>');
    expect(await page.evaluate(() => document.querySelectorAll('script:not([src]), b').length)).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('shows a markdown message’s snippet as its plain text, the matches still highlighted (issue 33 item 15)', async () => {
    await search('ocelot');
    const snippet = messageHits().first().getByTestId('search-snippet');
    await snippet.waitFor();
    const dom = await snippet.evaluate((el) => ({
      text: el.textContent,
      elements: [...el.querySelectorAll('*')].map((e) => e.tagName),
      marks: [...el.querySelectorAll('mark')].map((e) => e.textContent),
    }));
    expect(dom.text).toBe('Hello ocelot one two const ocelot = 1;');
    expect(dom.marks).toEqual(['ocelot', 'ocelot']);
    expect(dom.elements).toEqual(['MARK', 'MARK']);
    await screenshots(page, 'search-markdown-snippet');
  });

  it('a hit among the oldest of 131 messages opens its chat with that message in view', async () => {
    await search('narwhal');
    await screenshots(page, 'search-results');
    await messageHits().filter({ hasText: 'narwhal' }).getByRole('link').click();
    await page.getByTestId('chat-heading').filter({ hasText: 'Long history' }).waitFor();
    expect(new URL(page.url()).searchParams.get('message')).toBe(narwhalId);
    const target = page.locator(`[data-testid="message"][data-message-id="${narwhalId}"]`);
    await target.and(page.locator('[data-focused="true"]')).waitFor();
    await page.waitForFunction((id) => {
      const el = document.querySelector(`.messages [data-message-id="${id}"]`);
      const root = el?.closest('.messages');
      if (!el || !root) return false;
      const a = el.getBoundingClientRect();
      const b = root.getBoundingClientRect();
      return a.top >= b.top && a.bottom <= b.bottom;
    }, narwhalId);
    expect(await page.getByRole('log', { name: 'Messages' }).getByTestId('message').count()).toBeGreaterThan(100);
    // The hit stays marked as the open one in the results beside the chat.
    expect(await messageHits().filter({ hasText: 'narwhal' }).getByRole('link').getAttribute('aria-current')).toBe(
      'page',
    );
    await screenshots(page, 'search-hit-opened');
  });

  it('more results load by cursor', async () => {
    await page.getByLabel('Search in').selectOption({ label: 'Messages' });
    await search('pelican');
    await expect(messageHits().count()).resolves.toBe(20);
    await page.getByRole('button', { name: 'More results' }).click();
    await messageHits().nth(24).waitFor();
    await page.getByRole('button', { name: 'More results' }).waitFor({ state: 'detached' });
    const hitIds = await messageHits().evaluateAll((els) => els.map((e) => e.getAttribute('data-message-id')));
    expect(new Set(hitIds).size).toBe(25);
    await searchBox().press('Escape');
    await page.getByLabel('Search in').selectOption({ label: 'Everything' });
  });
});

describe('inbox filters', () => {
  it('by tag and by agent narrow the list to the service’s filtered list, and survive a reload', async () => {
    await page.goto(`${relay.url}/`);
    await page.getByTestId('chat-item').first().waitFor();
    const everything = await listedIds();
    expect(everything.length).toBe(Object.keys(ids).length);

    await page.getByLabel('Filter by tag').fill('ops');
    await page.getByLabel('Filter by tag').press('Enter');
    const ops = await apiIds('tag=ops');
    expect(ops).toEqual([ids.deploy, ids.opsAssistant, ids.opsCoder].sort());
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="chat-item"]').length === n, 3);
    expect(await listedIds()).toEqual(ops);
    expect(new URL(page.url()).searchParams.get('tag')).toBe('ops');

    await page.getByLabel('Filter by agent').selectOption({ label: 'Coder' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="chat-item"]').length === 1);
    expect(await listedIds()).toEqual(await apiIds('tag=ops&agentId=coder'));
    expect(await listedIds()).toEqual([ids.opsCoder]);
    expect(new URL(page.url()).searchParams.get('agent')).toBe('coder');
    await screenshots(page, 'inbox-filtered');

    await page.reload();
    await page.getByTestId('chat-item').first().waitFor();
    expect(await listedIds()).toEqual([ids.opsCoder]);
    expect(await page.getByLabel('Filter by tag').inputValue()).toBe('ops');
    expect(await page.getByLabel('Filter by agent').inputValue()).toBe('coder');

    // Opening a chat keeps the filters (the list beside it stays filtered).
    await page.getByTestId('chat-item').first().getByRole('link').click();
    await page.getByTestId('chat-heading').filter({ hasText: 'Ops with coder' }).waitFor();
    expect(new URL(page.url()).searchParams.get('tag')).toBe('ops');
    expect(await listedIds()).toEqual([ids.opsCoder]);

    // The tag options include the catalog's suggestions for what is typed, not only the tags in view.
    await page.getByLabel('Filter by tag').fill('mi');
    await page.locator('#tag-filter-options option[value="misc"]').waitFor({ state: 'attached' });
    await page.getByLabel('Filter by tag').fill('ops');
  });

  it('a live message into a chat outside the filter does not add it; a chat that loses the tag leaves', async () => {
    await page.goto(`${relay.url}/?tag=ops&agent=coder`);
    await page.getByTestId('chat-item').first().waitFor();
    await page.locator('[data-testid="connection"][data-state="open"]').waitFor();
    expect(await listedIds()).toEqual([ids.opsCoder]);

    // Misc with coder matches the agent but not the tag: it is re-read live, and stays out.
    const miscRead = page.waitForResponse(
      (r) => r.request().method() === 'GET' && r.url().endsWith(`/api/v1/chats/${ids.miscCoder}`),
    );
    await post(relay, ids.miscCoder, 'A live message outside the filter.', 'coder');
    await (await miscRead).finished();
    // A later message into the chat in view shows the list took live updates after that one.
    await post(relay, ids.opsCoder, 'A live message inside the filter.', 'coder');
    await page.getByTestId('chat-preview').filter({ hasText: 'inside the filter' }).waitFor();
    expect(await listedIds()).toEqual([ids.opsCoder]);

    // Without the agent filter: Ops with assistant leaves when its tag is removed.
    await page.getByLabel('Filter by agent').selectOption({ label: 'All agents' });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="chat-item"]').length === 3);
    expect((await relay.api('PATCH', `/api/v1/chats/${ids.opsAssistant}`, { tags: [] })).status).toBe(200);
    await page.locator(`[data-testid="chat-item"][data-chat-id="${ids.opsAssistant}"]`).waitFor({ state: 'detached' });
    expect(await listedIds()).toEqual([ids.deploy, ids.opsCoder].sort());

    await page.getByRole('button', { name: 'Clear tag filter' }).click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="chat-item"]').length === n,
      Object.keys(ids).length,
    );
    expect(new URL(page.url()).search).toBe('');
  });
});

describe('tags dialog', () => {
  it('adds a suggestion with the keyboard alone (arrow down, Enter) and a typed tag with Enter', async () => {
    await page.goto(`${relay.url}/chats/${ids.markup}`);
    await page.getByTestId('chat-heading').filter({ hasText: 'Markup chat' }).waitFor();
    await page.getByRole('button', { name: 'Tags' }).click();
    const dialog = page.getByRole('dialog', { name: 'Tags' });
    const input = dialog.getByRole('textbox', { name: 'Add tag' });
    await input.fill('mi');
    await dialog.getByTestId('tag-suggestion').filter({ hasText: 'misc' }).waitFor();
    await input.press('ArrowDown');
    await expect(
      dialog
        .getByTestId('tag-suggestion')
        .first()
        .evaluate((el) => el === document.activeElement),
    ).resolves.toBe(true);
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'Remove tag misc' }).waitFor();
    // Focus is back in the box: type the next tag and press Enter.
    await page.keyboard.type('urgent');
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'Remove tag urgent' }).waitFor();
    // The dialog shows an edit at once; the saves follow, one at a time (web/src/chat/tag-edits.ts).
    const tags = async () => ((await relay.api('GET', `/api/v1/chats/${ids.markup}`)).body as { tags: string[] }).tags;
    await eventually(tags, ['misc', 'urgent']);
    await dialog.getByRole('button', { name: 'Done' }).click();
  });
});
