/**
 * An agent's requests answered in the page (issue 26 item 4): a choice of one (a click resolves),
 * a choice of several (its min and max respected), a text answer checked against the request's
 * own validation first, a form with every field type of the contract (§2.3.1) whose stored values
 * are exactly what was entered; and requests cancelled by the agent or resolved elsewhere leave
 * the page live. The server's state is read back through the API each time. Answered and
 * cancelled requests stay in the history where they were asked, with their answer or "Cancelled"
 * (issue 33 item 14), also after a reload.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import {
  apiOk,
  createRequest,
  eventually,
  getChat,
  getRequest,
  messages,
  openApp,
  postMessage,
  seedChat,
} from './support/app.js';
import type { OpenApp } from './support/app.js';
import { cancelAllPending } from './support/deadlines.js';
import { useRelay } from './support/relay.js';
import { FORM } from './support/screens.js';

const relay = useRelay();
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

const card = (page: Page, requestId: string): Locator =>
  page
    .getByRole('region', { name: 'Pending requests' })
    .locator(`[data-testid="request"][data-request-id="${requestId}"]`);

/** A chat open in the page, with a request the agent created while the page was open (it shows live). */
async function withRequest(title: string, request: Record<string, unknown>) {
  const chatId = await seedChat(relay, { title });
  app = await openApp(holder.browser, relay, `/chats/${chatId}`);
  const created = await createRequest(relay, chatId, request);
  const form = card(app.page, created.id);
  await form.waitFor();
  await expect(form.getAttribute('data-request-type')).resolves.toBe(request.type);
  await form.getByRole('heading', { name: String(request.title) }).waitFor();
  return { chatId, requestId: created.id as string, form, page: app.page };
}

const status = (chatId: string, requestId: string) => getRequest(relay, chatId, requestId).then((r) => r.status);

describe('requests', () => {
  it('choice of one: a click on an option resolves it with that option', async () => {
    const { chatId, requestId, form } = await withRequest('Choice of one', {
      type: 'choice',
      title: 'Deploy now?',
      body: 'The build is green.',
      config: {
        options: [
          { id: 'yes', label: 'Deploy', variant: 'primary' },
          { id: 'no', label: 'Wait', variant: 'danger' },
        ],
      },
    });
    await form.getByText('The build is green.').waitFor();
    await expect(form.getByRole('checkbox').count()).resolves.toBe(0);
    await form.getByRole('button', { name: 'Wait' }).click();
    await form.waitFor({ state: 'detached' });
    const stored = await getRequest(relay, chatId, requestId);
    expect(stored).toMatchObject({
      status: 'resolved',
      resolved_by: 'user',
      resolution_payload: { selectedOptionIds: ['no'] },
    });
    expect((await getChat(relay, chatId)).pending_requests_count).toBe(0);
  });

  it('choice of several: submit only within min and max; the chosen options are stored', async () => {
    const { chatId, requestId, form } = await withRequest('Choice of several', {
      type: 'choice',
      title: 'Which toppings?',
      config: {
        options: ['cheese', 'basil', 'olives', 'onion'].map((id) => ({
          id,
          label: id[0]!.toUpperCase() + id.slice(1),
        })),
        minSelections: 2,
        maxSelections: 3,
      },
    });
    const submit = form.getByRole('button', { name: 'Submit' });
    const box = (name: string) => form.getByRole('checkbox', { name });
    await expect(submit.isDisabled()).resolves.toBe(true);
    await box('Cheese').check();
    await expect(submit.isDisabled()).resolves.toBe(true); // 1 < min 2
    await box('Olives').check();
    await expect(submit.isEnabled()).resolves.toBe(true);
    await box('Onion').check();
    // Max 3: the last option cannot be added; unchecking one frees it.
    await expect(box('Basil').isDisabled()).resolves.toBe(true);
    await box('Cheese').uncheck();
    await expect(box('Basil').isEnabled()).resolves.toBe(true);
    await box('Basil').check();
    await expect(box('Cheese').isDisabled()).resolves.toBe(true);
    expect(await status(chatId, requestId)).toBe('pending');
    await submit.click();
    await form.waitFor({ state: 'detached' });
    const stored = await getRequest(relay, chatId, requestId);
    expect(stored.status).toBe('resolved');
    expect(stored.resolution_payload).toEqual({ selectedOptionIds: ['olives', 'onion', 'basil'] });
  });

  it('text answer: checked against the validation in the page first, then resolved with the trimmed text', async () => {
    const { chatId, requestId, form } = await withRequest('Text answer', {
      type: 'text_input',
      title: 'Name the release',
      config: {
        placeholder: 'Capitalised, 5 to 20 characters',
        validation: { minLength: 5, maxLength: 20, pattern: '^[A-Z]' },
      },
    });
    const answer = form.getByLabel('Answer');
    await expect(answer.getAttribute('placeholder')).resolves.toBe('Capitalised, 5 to 20 characters');
    await expect(answer.getAttribute('maxlength')).resolves.toBe('20');
    const submit = form.getByRole('button', { name: 'Submit' });
    const alert = form.getByRole('alert');

    await submit.click();
    await alert.filter({ hasText: 'Write an answer first.' }).waitFor();
    await answer.fill('Abc');
    await submit.click();
    await alert.filter({ hasText: 'At least 5 characters.' }).waitFor();
    await answer.fill('lowercase start');
    await submit.click();
    await alert.filter({ hasText: 'The answer does not have the expected format.' }).waitFor();
    expect(await status(chatId, requestId)).toBe('pending');

    await answer.fill('  Aurora Borealis  ');
    await submit.click();
    await form.waitFor({ state: 'detached' });
    const stored = await getRequest(relay, chatId, requestId);
    expect(stored.status).toBe('resolved');
    expect(stored.resolution_payload).toEqual({ text: 'Aurora Borealis' });
  });

  it("text answer: an agent's catastrophic pattern is checked without stalling the page (issue 33 item 1)", async () => {
    // `^(a+)+$` against 34 `a` and a `!` held a backtracking engine for over a minute.
    const { chatId, requestId, form, page } = await withRequest('Catastrophic pattern', {
      type: 'text_input',
      title: 'Only the letter a',
      config: { validation: { pattern: '^(a+)+$' } },
    });
    await form.getByLabel('Answer').fill(`${'a'.repeat(34)}!`);
    const started = Date.now();
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByRole('alert').filter({ hasText: 'The answer does not have the expected format.' }).waitFor();
    // The page's main thread answers right after (a stalled one would not run this at all).
    await expect(page.evaluate(() => 1 + 1)).resolves.toBe(2);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await status(chatId, requestId)).toBe('pending');

    await form.getByLabel('Answer').fill('a'.repeat(34));
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.waitFor({ state: 'detached' });
    expect((await getRequest(relay, chatId, requestId)).resolution_payload).toEqual({ text: 'a'.repeat(34) });
  });

  it('form with every field type: required ones enforced; the stored values are exactly what was entered', async () => {
    const { chatId, requestId, form } = await withRequest('Form', FORM);
    const submit = form.getByRole('button', { name: 'Ship it' });
    await submit.click();
    // The three required fields are named; nothing was sent.
    await expect(form.getByRole('alert').allTextContents()).resolves.toEqual([
      'Recipient is required.',
      'Speed is required.',
      'Delivery day is required.',
    ]);
    expect(await status(chatId, requestId)).toBe('pending');

    await expect(form.getByLabel('Recipient').getAttribute('type')).resolves.toBe('text');
    await form.getByLabel('Recipient').fill('Ada Lovelace');
    await expect(form.getByLabel('Delivery notes').evaluate((el) => el.tagName)).resolves.toBe('TEXTAREA');
    await form.getByLabel('Delivery notes').fill('Ring twice.\nLeave at the door');
    await form.getByLabel('Speed').selectOption('Express');
    const extras = form.getByRole('group', { name: 'Extras' });
    await extras.getByRole('checkbox', { name: 'Gift wrap' }).check();
    await extras.getByRole('checkbox', { name: 'Card' }).check();
    await form.getByRole('checkbox', { name: 'Signature on delivery' }).check();
    await expect(form.getByLabel('Delivery day').getAttribute('type')).resolves.toBe('date');
    await form.getByLabel('Delivery day').fill('2026-12-24');
    await submit.click();
    await form.waitFor({ state: 'detached' });

    const stored = await getRequest(relay, chatId, requestId);
    expect(stored.status).toBe('resolved');
    expect(stored.resolution_payload).toEqual({
      values: {
        recipient: 'Ada Lovelace',
        notes: 'Ring twice.\nLeave at the door',
        speed: 'Express',
        extras: ['Gift wrap', 'Card'],
        signature: true,
        day: '2026-12-24',
      },
    });
  });

  it("shows a request the agent asks while the chat's first read of its requests is still on its way", async () => {
    // The race a loaded machine met: the page's first read of the requests answered before the
    // agent asked, and the request's event came while that answer was still on its way. The read's
    // answer is held here (answered by the service at once, handed to the page at the end).
    await cancelAllPending(relay);
    const chatId = await seedChat(relay, { title: 'Asked as it opened' });
    let answered!: () => void;
    const firstAnswered = new Promise<void>((resolve) => (answered = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    app = await openApp(holder.browser, relay, `/chats/${chatId}`, undefined, {
      onPage: async (page) => {
        await page.route(
          (url) => url.pathname === `/api/v1/chats/${chatId}/requests`,
          async (route) => {
            const response = await route.fetch();
            answered();
            await held;
            await route.fulfill({ response }).catch(() => undefined);
          },
          { times: 1 },
        );
      },
    });
    let requestId = '';
    try {
      await firstAnswered;
      const created = await createRequest(relay, chatId, {
        type: 'choice',
        title: 'Asked now',
        config: { options: [{ id: 'a', label: 'A' }] },
      });
      requestId = created.id;
      // The event reached the page: the approvals badge counts the request.
      await app.page.getByTestId('approvals-badge').filter({ hasText: /^1$/ }).waitFor();
      await card(app.page, requestId).waitFor({ timeout: 10_000 });
    } finally {
      release();
    }
    await expect(card(app.page, requestId).count()).resolves.toBe(1);
  });

  it('a request cancelled by the agent, and one resolved elsewhere, leave the page live', async () => {
    const { chatId, requestId, form, page } = await withRequest('Gone elsewhere', {
      type: 'choice',
      title: 'Cancelled soon',
      config: { options: [{ id: 'a', label: 'A' }] },
    });
    const other = await createRequest(relay, chatId, {
      type: 'text_input',
      title: 'Resolved elsewhere',
      config: {},
    });
    const otherForm = card(page, other.id);
    await otherForm.waitFor();

    await apiOk(relay, 'POST', `/api/v1/requests/${requestId}/cancel`);
    await form.waitFor({ state: 'detached' });
    await expect(otherForm.count()).resolves.toBe(1);

    await apiOk(relay, 'POST', `/api/v1/requests/${other.id}/resolve`, {
      text: 'answered by a bot',
      resolvedBy: 'backend',
    });
    await otherForm.waitFor({ state: 'detached' });
    await page.getByRole('region', { name: 'Pending requests' }).waitFor({ state: 'detached' });
    await eventually(() => getChat(relay, chatId).then((c) => c.pending_requests_count), 0);
  });

  it('answered and cancelled requests stay in the history, in order, with their answer or "Cancelled", after a reload too', async () => {
    const chatId = await seedChat(relay, { title: 'Requests in the history' });
    app = await openApp(holder.browser, relay, `/chats/${chatId}`);
    const { page } = app;
    await postMessage(relay, chatId, 'Two questions before the release.');
    const choice = await createRequest(relay, chatId, {
      type: 'choice',
      title: 'Ship on Friday?',
      body: 'The freeze starts Monday.',
      config: {
        options: [
          { id: 'yes', label: 'Ship it' },
          { id: 'no', label: 'Wait a week' },
        ],
      },
    });
    await postMessage(relay, chatId, 'And one more.');
    const text = await createRequest(relay, chatId, { type: 'text_input', title: 'Release name?', config: {} });
    await postMessage(relay, chatId, 'Thanks, that is all.');
    await card(page, text.id).waitFor();

    // The person answers the choice; the agent cancels the text request.
    await card(page, choice.id).getByRole('button', { name: 'Wait a week' }).click();
    await card(page, choice.id).waitFor({ state: 'detached' });
    await apiOk(relay, 'POST', `/api/v1/requests/${text.id}/cancel`);
    await card(page, text.id).waitFor({ state: 'detached' });

    const log = page.getByRole('log', { name: 'Messages' });
    const record = (id: string) => log.locator(`[data-testid="request-record"][data-request-id="${id}"]`);
    const history = () =>
      log
        .locator('[data-testid="message"], [data-testid="request-record"]')
        .evaluateAll((items) =>
          items.map((el) =>
            el.getAttribute('data-testid') === 'request-record'
              ? `${el.getAttribute('data-status')}: ${el.querySelector('.request-record-title')?.textContent} → ${
                  el.querySelector('[data-testid="request-answer"]')?.textContent ??
                  el.querySelector('.request-outcome-label')?.textContent?.split(' ')[0]
                }`
              : el.querySelector('[data-testid="message-body"]')?.textContent?.trim(),
          ),
        );
    const expected = [
      'Two questions before the release.',
      'resolved: Ship on Friday? → Wait a week',
      'And one more.',
      'cancelled: Release name? → Cancelled',
      'Thanks, that is all.',
    ];
    await record(text.id).waitFor();
    expect(await history()).toEqual(expected);
    await expect(record(choice.id).getByText('The freeze starts Monday.').count()).resolves.toBe(1);
    // The time it was answered, as a <time> with the stored resolved_at.
    const stored = await getRequest(relay, chatId, choice.id);
    await expect(record(choice.id).locator(`time[datetime="${stored.resolved_at}"]`).count()).resolves.toBe(1);
    await expect(messages(page).count()).resolves.toBe(3);
    await screenshots(page, 'requests-in-history');

    await page.reload();
    await record(text.id).waitFor();
    expect(await history()).toEqual(expected);
  });
});
