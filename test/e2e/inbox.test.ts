/**
 * The inbox as a person sees it (issue 26 item 4): the service's order (pinned first, then newest
 * activity), unread and pending badges, previews, kept live by the tab's event stream (a message
 * written by an agent elsewhere moves its chat, changes its preview and badge without a reload),
 * and the archived view, between which archive and unarchive move a chat live.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { useBrowser } from './support/browser.js';
import {
  apiOk,
  chatItem,
  createRequest,
  eventually,
  listedIds,
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

const serverOrder = async (archived: boolean): Promise<string[]> =>
  ((await apiOk(relay, 'GET', `/api/v1/chats?archived=${archived}&limit=100`)) as { data: { id: string }[] }).data.map(
    (c) => c.id,
  );

describe('inbox', () => {
  it('lists pinned chats first, then by newest activity, with unread and pending badges and previews; a message elsewhere updates it live', async () => {
    const older = await seedChat(relay, { title: 'Older chat' });
    await postMessage(relay, older, 'first words in the older chat');
    const pinned = await seedChat(relay, { title: 'Pinned chat' });
    await postMessage(relay, pinned, 'the pinned one');
    await apiOk(relay, 'PATCH', `/api/v1/chats/${pinned}`, { pinned: true });
    await apiOk(relay, 'POST', `/api/v1/chats/${pinned}/mark-read`);
    const newer = await seedChat(relay, { title: 'Newer chat' });
    await postMessage(relay, newer, 'one');
    await postMessage(relay, newer, 'two: the **latest** words');
    await createRequest(relay, newer, {
      type: 'choice',
      title: 'Go?',
      config: { options: [{ id: 'y', label: 'Yes' }] },
    });
    const user = await seedChat(relay, { title: 'User last' });
    await postMessage(relay, user, 'my own question', 'user');

    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await chatItem(page, older).waitFor();
    const expected = await serverOrder(false);
    expect(await listedIds(page)).toEqual(expected);
    // Pinned first, then newest activity first.
    expect(expected.slice(0, 4)).toEqual([pinned, user, newer, older]);
    await expect(chatItem(page, pinned).getAttribute('data-pinned')).resolves.toBe('true');
    await expect(chatItem(page, pinned).getByTestId('pinned-marker').count()).resolves.toBe(1);
    await expect(chatItem(page, newer).getByTestId('pinned-marker').count()).resolves.toBe(0);

    // Badges: the numbers of the server's derived fields; absent when 0.
    await expect(chatItem(page, newer).getByTestId('unread-badge').textContent()).resolves.toBe('2');
    await expect(chatItem(page, newer).getByTestId('pending-badge').textContent()).resolves.toBe('1');
    await expect(chatItem(page, older).getByTestId('unread-badge').textContent()).resolves.toBe('1');
    await expect(chatItem(page, older).getByTestId('pending-badge').count()).resolves.toBe(0);
    await expect(chatItem(page, pinned).getByTestId('unread-badge').count()).resolves.toBe(0);
    await expect(chatItem(page, user).getByTestId('unread-badge').count()).resolves.toBe(0);

    // Previews: the last message's text as it reads, markup left out (the user's own marked as such).
    await expect(chatItem(page, newer).getByTestId('chat-preview').textContent()).resolves.toContain(
      'two: the latest words',
    );
    await expect(chatItem(page, older).getByTestId('chat-preview').textContent()).resolves.toBe(
      'first words in the older chat',
    );
    await expect(chatItem(page, user).getByTestId('chat-preview').textContent()).resolves.toBe('You: my own question');
    await expect(chatItem(page, older).getByTestId('chat-title').textContent()).resolves.toBe('Older chat');

    // Live: an agent writes in the oldest chat; it moves up under the pinned one, with its new
    // preview and badge, in the same document (no reload).
    await page.evaluate(() => ((globalThis as unknown as { marker: number }).marker = 42));
    await postMessage(relay, older, 'fresh news from the agent');
    await chatItem(page, older).getByTestId('chat-preview').filter({ hasText: 'fresh news from the agent' }).waitFor();
    await eventually(() => listedIds(page).then((ids) => ids.slice(0, 2)), [pinned, older]);
    await expect(chatItem(page, older).getByTestId('unread-badge').textContent()).resolves.toBe('2');
    expect(await listedIds(page)).toEqual(await serverOrder(false));
    // A resolved request takes the pending badge away, live.
    const pending = (await apiOk(relay, 'GET', `/api/v1/chats/${newer}/requests`)) as { data: { id: string }[] };
    await apiOk(relay, 'POST', `/api/v1/requests/${pending.data[0]!.id}/resolve`, { selectedOptionIds: ['y'] });
    await chatItem(page, newer).getByTestId('pending-badge').waitFor({ state: 'detached' });
    expect(await page.evaluate(() => (globalThis as unknown as { marker?: number }).marker)).toBe(42);
  });

  it('the archived view lists archived chats only; archive and unarchive elsewhere move a chat between views live', async () => {
    const kept = await seedChat(relay, { title: 'Stays in the inbox' });
    const archived = await seedChat(relay, { title: 'Already archived' });
    await apiOk(relay, 'POST', `/api/v1/chats/${archived}/archive`);
    const moving = await seedChat(relay, { title: 'Moves around' });

    app = await openApp(holder.browser, relay, '/');
    const { page } = app;
    await chatItem(page, moving).waitFor();
    await expect(chatItem(page, archived).count()).resolves.toBe(0);
    await expect(chatItem(page, kept).count()).resolves.toBe(1);

    // Archived elsewhere: leaves the inbox live.
    await apiOk(relay, 'POST', `/api/v1/chats/${moving}/archive`);
    await chatItem(page, moving).waitFor({ state: 'detached' });

    await page.getByRole('link', { name: 'Archived', exact: true }).click();
    await page.waitForURL(`${relay.url}/archived`);
    await chatItem(page, moving).waitFor();
    await chatItem(page, archived).waitFor();
    const archivedIds = await serverOrder(true);
    expect(await listedIds(page)).toEqual(archivedIds);
    expect(archivedIds).toEqual(expect.arrayContaining([moving, archived]));
    expect(archivedIds).not.toContain(kept);

    // Unarchived elsewhere: leaves the archived view live, and is back in the inbox.
    await apiOk(relay, 'POST', `/api/v1/chats/${moving}/unarchive`);
    await chatItem(page, moving).waitFor({ state: 'detached' });
    await expect(chatItem(page, archived).count()).resolves.toBe(1);

    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await page.waitForURL(`${relay.url}/`);
    await chatItem(page, moving).waitFor();
    await expect(chatItem(page, archived).count()).resolves.toBe(0);
    expect(await listedIds(page)).toEqual(await serverOrder(false));
  });
});
