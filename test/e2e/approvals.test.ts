/**
 * The Approvals view and deadlines in the page (issue 36 item 4, contract §5.5.6), at a desktop
 * and a phone width: every chat's pending requests soonest deadline first, each under its chat's
 * title, with its countdown and the default that will apply; the top bar's badge with the count;
 * kept live as agents ask and cancel, and read again when a reminder comes (a deadline moved by a
 * PATCH sends no event); answered in place; and a chat's card counting down to its
 * deadline, then showing what the deadline did ("Expired: Hold applied", "Expired: cancelled"),
 * also after a reload. The service's state is read back through the API.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { VIEWPORTS, screenshots, useBrowser } from './support/browser.js';
import { apiOk, chatItem, getRequest, openApp, seedChat } from './support/app.js';
import type { OpenApp } from './support/app.js';
import { approvalIds, cancelAllPending, createWith, shipOrHold } from './support/deadlines.js';
import { eventually } from './support/poll.js';
import { useRelay } from './support/relay.js';

const relay = useRelay({ env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '100000' } });
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const badge = (page: Page) => page.getByTestId('approvals-badge');
const badgeText = async (page: Page) => ((await badge(page).count()) ? await badge(page).textContent() : null);
const views = (page: Page) => page.getByRole('navigation', { name: 'Views' });
const approval = (page: Page, requestId: string) =>
  page.locator(`[data-testid="approval"][data-request-id="${requestId}"]`);

describe.each(VIEWPORTS)('at $width px', (viewport) => {
  const phone = viewport.width < 800;

  it('lists every pending request soonest deadline first, with its chat, countdown and default; live; the badge counts them', async () => {
    await cancelAllPending(relay);
    const ops = await seedChat(relay, { title: 'Ops room' });
    const billing = await seedChat(relay, { title: 'Billing' });
    const later = await createWith(
      relay,
      ops,
      shipOrHold('Ship the hotfix?', {
        inSeconds: 3600,
        onExpiry: 'resolve',
        default: { selectedOptionIds: ['hold'] },
      }),
    );
    const sooner = await createWith(relay, billing, shipOrHold('Refund the order?', { inSeconds: 600 }));
    const open = await createWith(relay, ops, shipOrHold('Rotate the keys?'));

    app = await openApp(holder.browser, relay, '/', viewport);
    const { page } = app;
    await eventually(() => badgeText(page), '3');
    await views(page)
      .getByRole('link', { name: /^Approvals/ })
      .click();
    await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
    await eventually(() => approvalIds(page), [sooner, later, open]);
    expect(new URL(page.url()).pathname).toBe('/approvals');

    // Each under its chat's title (a link to the chat), with the chat's own card.
    await eventually(() => approval(page, sooner).getByTestId('approval-chat').textContent(), 'Billing');
    expect(await approval(page, sooner).getByTestId('approval-chat').getAttribute('href')).toBe(`/chats/${billing}`);
    expect(await approval(page, later).getByTestId('request-default').textContent()).toBe('Hold will be applied');
    expect(await approval(page, sooner).getByTestId('request-default').textContent()).toBe('Will be cancelled');
    expect(await approval(page, open).getByTestId('request-deadline').count()).toBe(0);
    expect(await approval(page, later).getByRole('timer').textContent()).toMatch(/^(59:\d\d|1:00:00)$/);
    // The countdown ticks.
    const before = await approval(page, sooner).getByRole('timer').textContent();
    await page.waitForFunction(
      ([id, text]) => document.querySelector(`[data-request-id="${id}"] [role="timer"]`)?.textContent !== text,
      [sooner, before] as const,
    );
    if (!phone) await screenshots(page, 'approvals');

    // Live: a new request with a sooner deadline goes first; a cancelled one leaves.
    const soonest = await createWith(relay, ops, shipOrHold('Page the on-call?', { inSeconds: 120 }));
    await eventually(() => approvalIds(page), [soonest, sooner, later, open]);
    await apiOk(relay, 'POST', `/api/v1/requests/${sooner}/cancel`);
    await eventually(() => approvalIds(page), [soonest, later, open]);
    if (!phone) await eventually(() => badgeText(page), '3');

    // The chat link opens the chat, its card there.
    await approval(page, later).getByTestId('approval-chat').click();
    await page.getByTestId('chat-heading').filter({ hasText: 'Ops room' }).waitFor();
    await page.locator(`[data-testid="request"][data-request-id="${later}"]`).waitFor({ state: 'attached' });
    if (phone) {
      await page.goBack();
      await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
      await page.getByRole('link', { name: 'Back to chats' }).click();
      await eventually(() => badgeText(page), '3');
    }
  });

  it('a reminder reads the list again: a deadline moved by a PATCH (which sends no event) shows once its reminder comes', async () => {
    await cancelAllPending(relay);
    const chatId = await seedChat(relay, { title: 'Moved deadline' });
    const requestId = await createWith(relay, chatId, shipOrHold('Approve the budget?', { inSeconds: 3600 }));
    app = await openApp(holder.browser, relay, '/', viewport);
    const { page } = app;
    await views(page)
      .getByRole('link', { name: /^Approvals/ })
      .click();
    const timer = approval(page, requestId).getByRole('timer');
    await eventually(async () => /^(59:\d\d|1:00:00)$/.test((await timer.textContent()) ?? ''), true);
    // Moved to 40 s from now, reminded 38 s before: the reminder comes in about 2 s.
    await apiOk(relay, 'PATCH', `/api/v1/requests/${requestId}`, {
      deadline: { inSeconds: 40, remindBeforeSeconds: [38] },
    });
    const reminded = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/requests');
    await reminded;
    await eventually(async () => /^0:[0-3]\d$/.test((await timer.textContent()) ?? ''), true);
    await apiOk(relay, 'POST', `/api/v1/requests/${requestId}/cancel`);
  }, 60_000);

  it('answers a request in place: it leaves the list and the badge, resolved with the option chosen', async () => {
    await cancelAllPending(relay);
    const chatId = await seedChat(relay, { title: 'Release train' });
    const requestId = await createWith(
      relay,
      chatId,
      shipOrHold('Ship release 4.2?', {
        inSeconds: 900,
        onExpiry: 'resolve',
        default: { selectedOptionIds: ['hold'] },
      }),
    );
    const other = await createWith(relay, chatId, shipOrHold('Tag the build?'));
    app = await openApp(holder.browser, relay, '/', viewport);
    const { page } = app;
    await views(page)
      .getByRole('link', { name: /^Approvals/ })
      .click();
    await eventually(() => approvalIds(page), [requestId, other]);
    await approval(page, requestId).getByRole('button', { name: 'Ship' }).click();
    await eventually(() => approvalIds(page), [other]);
    const stored = await getRequest(relay, chatId, requestId);
    expect(stored).toMatchObject({
      status: 'resolved',
      resolved_by: 'user',
      resolution_payload: { selectedOptionIds: ['ship'] },
      expired_at: null,
    });
    await approval(page, other).getByRole('button', { name: 'Hold' }).click();
    await page.getByTestId('approvals-summary').filter({ hasText: 'Nothing is waiting for an answer.' }).waitFor();
    if (!phone) await eventually(() => badgeText(page), null);
  });

  it("a chat's card counts down to its deadline, then says what the deadline did, also after a reload", async () => {
    await cancelAllPending(relay);
    const chatId = await seedChat(relay, { title: 'Deadline drill', firstMessage: 'Two questions with deadlines.' });
    app = await openApp(holder.browser, relay, '/', viewport);
    const { page } = app;
    await chatItem(page, chatId).getByRole('link').click();
    await page.getByTestId('chat-heading').filter({ hasText: 'Deadline drill' }).waitFor();
    const resolving = await createWith(
      relay,
      chatId,
      shipOrHold('Ship before the window closes?', {
        inSeconds: 12,
        onExpiry: 'resolve',
        default: { selectedOptionIds: ['hold'] },
      }),
    );
    const cancelling = await createWith(relay, chatId, shipOrHold('Send the survey?', { inSeconds: 12 }));
    const region = page.getByRole('region', { name: 'Pending requests' });
    const card = region.locator(`[data-testid="request"][data-request-id="${resolving}"]`);
    await card.waitFor({ state: 'attached' });
    // On a phone the requests fold into a bar: open it.
    if (phone) {
      // Folded, the bar says when the soonest of them closes.
      const bar = region.getByRole('button', { name: '2 pending requests' });
      await eventually(
        async () => /^ · next in 0:\d\d$/.test((await bar.getByTestId('soonest-deadline').textContent()) ?? ''),
        true,
      );
      await bar.click();
    }
    await card.getByRole('timer').waitFor();
    expect(await card.getByTestId('request-default').textContent()).toBe('Hold will be applied');
    expect(
      await region
        .locator(`[data-testid="request"][data-request-id="${cancelling}"]`)
        .getByTestId('request-default')
        .textContent(),
    ).toBe('Will be cancelled');
    const first = Number((await card.getByRole('timer').textContent())!.split(':')[1]);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(12);
    // It counts down, second by second.
    await page.waitForFunction(
      ([id, seconds]) => {
        const text = document.querySelector(`[data-request-id="${id}"] [role="timer"]`)?.textContent ?? '';
        return Number(text.split(':')[1]) < seconds;
      },
      [resolving, first] as const,
    );
    // The deadline passes: the cards leave, the history says what happened.
    const record = (id: string) =>
      page.locator(`[data-testid="request-record"][data-request-id="${id}"][data-expired="true"]`);
    await record(resolving).waitFor({ timeout: 30_000 });
    await record(cancelling).waitFor({ timeout: 30_000 });
    const outcome = (id: string) => record(id).getByTestId('request-outcome').textContent();
    expect(await outcome(resolving)).toMatch(/^Expired: Hold applied/);
    expect(await outcome(cancelling)).toMatch(/^Expired: cancelled/);
    expect(await getRequest(relay, chatId, resolving)).toMatchObject({
      status: 'resolved',
      resolved_by: 'backend',
      resolution_payload: { selectedOptionIds: ['hold'] },
      expired_at: expect.any(String),
    });
    await record(resolving).scrollIntoViewIfNeeded();
    if (!phone) await screenshots(page, 'request-expired');

    await page.reload();
    await record(resolving).waitFor();
    expect(await outcome(resolving)).toMatch(/^Expired: Hold applied/);
    expect(await outcome(cancelling)).toMatch(/^Expired: cancelled/);
  }, 60_000);
});
