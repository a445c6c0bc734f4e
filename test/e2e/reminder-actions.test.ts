/**
 * A deadline's reminder as a notification, answered from the notification (issue 36 item 4,
 * contract §5.5.6), in the full browser at a desktop and a phone width. The push is the service's
 * own payload (built by functions/core/push-payload.ts, as the service builds a reminder's),
 * delivered through DevTools; the worker shows the request's options as notification actions; a
 * click on one (dispatched in the worker: support/worker.ts) answers the request from the worker
 * with the session cookie, and a notification says what was sent; an answer to a request already
 * closed says so and changes nothing; a click on the notification itself opens the chat.
 * Whether the service sends the reminder at all is the integration tests' (test/integration).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { buildPushPayload } from '../../functions/core/push-payload.js';
import { VIEWPORTS, useBrowser } from './support/browser.js';
import { getRequest } from './support/app.js';
import { createWith, decisionLog, shipOrHold } from './support/deadlines.js';
import { eventually } from './support/poll.js';
import { seedChat, useRelay } from './support/relay.js';
import { clickNotification, pushUntilShown, shownNotifications, workerOf } from './support/worker.js';

const relay = useRelay({ config: { push: { enabled: true, subject: 'mailto:ops@example.com' } } });
// The full browser: the headless shell has no notifications or push.
const chromium = useBrowser({ full: true });
const contexts: BrowserContext[] = [];
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

async function signedIn(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await chromium.browser.newContext({ viewport });
  contexts.push(context);
  await context.grantPermissions(['notifications'], { origin: relay.url });
  const page = await context.newPage();
  await page.goto(`${relay.url}/`);
  await page.getByLabel('Instance secret').fill(relay.secret!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Chats' }).waitFor();
  return { context, page };
}

/** The reminder push the service sends for a choice of Ship or Hold (functions/core/push.ts). */
const reminder = (chatId: string, requestId: string, title: string) =>
  buildPushPayload(title, '5 minutes left', {
    chatId,
    type: 'request',
    url: `/chats/${chatId}`,
    requestId,
    actions: [
      { id: 'ship', label: 'Ship' },
      { id: 'hold', label: 'Hold' },
    ],
  })!;

describe.each(VIEWPORTS)('at $width px', (viewport) => {
  it('shows the options as actions; an action answers from the worker, then says what was sent; again, that it was closed', async () => {
    const chatId = await seedChat(relay, { title: `Release at ${viewport.width}` });
    const requestId = await createWith(
      relay,
      chatId,
      shipOrHold('Ship release 5?', { inSeconds: 3600, onExpiry: 'resolve', default: { selectedOptionIds: ['ship'] } }),
    );
    const { context, page } = await signedIn(viewport);
    const { worker, push } = await workerOf(context, page, relay.url);
    const tag = `chat:${chatId}`;
    const payload = reminder(chatId, requestId, 'Ship release 5?');
    const shown = async () => (await shownNotifications(worker)).find((n) => n.tag === tag);
    await pushUntilShown(push, payload, async () => Boolean(await shown()));
    expect(await shown()).toEqual({
      title: 'Ship release 5?',
      body: '5 minutes left',
      tag,
      data: {
        chatId,
        type: 'request',
        url: `/chats/${chatId}`,
        requestId,
        actions: [
          { id: 'ship', label: 'Ship' },
          { id: 'hold', label: 'Hold' },
        ],
      },
      actions: [
        { action: 'ship', title: 'Ship' },
        { action: 'hold', title: 'Hold' },
      ],
    });

    // "Hold": the worker resolves the request with the session cookie (actor: session).
    await clickNotification(worker, tag, 'hold');
    await eventually(async () => (await getRequest(relay, chatId, requestId)).status, 'resolved');
    expect(await getRequest(relay, chatId, requestId)).toMatchObject({
      resolved_by: 'user',
      resolution_payload: { selectedOptionIds: ['hold'] },
    });
    expect((await decisionLog(relay)).find((e) => e.request_id === requestId)).toMatchObject({
      action: 'resolved',
      actor: 'session',
      payload: { selectedOptionIds: ['hold'] },
    });
    const answerTag = `request:${requestId}`;
    const answered = async () => (await shownNotifications(worker)).find((n) => n.tag === answerTag)?.body;
    await eventually(answered, 'Sent: Hold');
    // The reminder itself was closed by the click.
    expect(await shown()).toBeUndefined();

    // The same reminder again (say, a second device's): the request is closed, nothing changes.
    await pushUntilShown(push, payload, async () => Boolean(await shown()));
    await clickNotification(worker, tag, 'ship');
    await eventually(answered, 'Not sent: the request was already answered.');
    expect((await getRequest(relay, chatId, requestId)).resolution_payload).toEqual({ selectedOptionIds: ['hold'] });
  });

  it('a click on the reminder itself (no action) opens its chat', async () => {
    const chatId = await seedChat(relay, { title: `Open me at ${viewport.width}` });
    const requestId = await createWith(relay, chatId, shipOrHold('Open the chat?', { inSeconds: 3600 }));
    const { context, page } = await signedIn(viewport);
    const { worker, push } = await workerOf(context, page, relay.url);
    const tag = `chat:${chatId}`;
    await pushUntilShown(push, reminder(chatId, requestId, 'Open the chat?'), async () =>
      (await shownNotifications(worker)).some((n) => n.tag === tag),
    );
    await clickNotification(worker, tag);
    await eventually(async () => new URL(page.url()).pathname, `/chats/${chatId}`);
    await page
      .getByTestId('chat-heading')
      .filter({ hasText: `Open me at ${viewport.width}` })
      .waitFor();
    await page.locator(`[data-testid="request"][data-request-id="${requestId}"]`).waitFor({ state: 'attached' });
    expect((await getRequest(relay, chatId, requestId)).status).toBe('pending');
  });
});
