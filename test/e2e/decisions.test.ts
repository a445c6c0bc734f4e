/**
 * The Decisions view (issue 36 item 4, contract §5.5.6) at a desktop and a phone width: the
 * decision log newest first, kept live; the chat filter; Export, a JSON Lines file of the whole log
 * (oldest first, one entry a line, each as the API gave it); Verify, the hash chain checked in the
 * browser: intact on the service's log, broken where a GET /decisions answer was altered on its way
 * to the page (playwright's route: an entry's title edited, or an entry left out).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { VIEWPORTS, screenshots, useBrowser } from './support/browser.js';
import { apiOk, openApp, seedChat } from './support/app.js';
import type { OpenApp } from './support/app.js';
import { createWith, decisionLog, shipOrHold } from './support/deadlines.js';
import { eventually } from './support/poll.js';
import { useRelay } from './support/relay.js';

const relay = useRelay({ env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '100000' } });
const holder = useBrowser();
let app: OpenApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

let deploys: string;
let billing: string;
beforeAll(async () => {
  deploys = await seedChat(relay, { title: 'Deploys' });
  billing = await seedChat(relay, { title: 'Billing' });
  // Five closings: answered, cancelled, answered with text, in two chats.
  for (const [chatId, title] of [
    [deploys, 'Ship 4.1?'],
    [billing, 'Refund order 17?'],
    [deploys, 'Ship 4.2?'],
  ] as const) {
    const id = await createWith(relay, chatId, shipOrHold(title));
    await apiOk(relay, 'POST', `/api/v1/requests/${id}/resolve`, { selectedOptionIds: ['ship'] });
  }
  const cancelled = await createWith(relay, billing, shipOrHold('Refund order 18?'));
  await apiOk(relay, 'POST', `/api/v1/requests/${cancelled}/cancel`);
  const text = await createWith(relay, deploys, { type: 'text_input', title: 'Name the release', config: {} });
  await apiOk(relay, 'POST', `/api/v1/requests/${text}/resolve`, { text: 'Nightjar' });
}, 60_000);

const shownSeqs = (page: Page): Promise<number[]> =>
  page.locator('[data-testid="decision"]').evaluateAll((items) => items.map((i) => Number(i.getAttribute('data-seq'))));

/** The signed-in page at /decisions (through the top bar's link: on a phone the bar is on the list screen). */
async function openDecisions(viewport: { width: number; height: number }, onPage?: (page: Page) => Promise<void>) {
  app = await openApp(holder.browser, relay, '/', viewport, onPage ? { onPage } : {});
  const { page } = app;
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Decisions' }).click();
  await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
  return page;
}

describe.each(VIEWPORTS)('at $width px', (viewport) => {
  const phone = viewport.width < 800;

  it('lists the log newest first, kept live; filters by chat', async () => {
    const log = await decisionLog(relay);
    const page = await openDecisions(viewport);
    const seqs = log.map((e) => e.seq).reverse();
    await eventually(() => shownSeqs(page), seqs);
    const named = log.find((e) => e.title === 'Name the release');
    const entry = page.locator(`[data-testid="decision"][data-seq="${named.seq}"]`);
    expect(await entry.textContent()).toContain('Name the release');
    expect(await entry.getByTestId('decision-payload').textContent()).toBe('Wrote: “Nightjar”');
    expect(await entry.getByRole('link', { name: 'Deploys' }).getAttribute('href')).toBe(`/chats/${deploys}`);

    // Live: a request closed meanwhile shows at the top.
    const id = await createWith(relay, billing, shipOrHold('Refund order 19?'));
    await apiOk(relay, 'POST', `/api/v1/requests/${id}/resolve`, { selectedOptionIds: ['hold'] });
    const after = await decisionLog(relay);
    await eventually(() => shownSeqs(page), after.map((e) => e.seq).reverse());

    // The filter: one chat's entries only.
    await page.getByLabel('Chat', { exact: true }).selectOption({ label: 'Billing' });
    await eventually(
      () => shownSeqs(page),
      after
        .filter((e) => e.chat_id === billing)
        .map((e) => e.seq)
        .reverse(),
    );
    const chats = await page
      .locator('[data-testid="decision"]')
      .evaluateAll((items) => [...new Set(items.map((i) => i.getAttribute('data-chat-id')))]);
    expect(chats).toEqual([billing]);
    await page.getByLabel('Chat', { exact: true }).selectOption({ label: 'All chats' });
    await eventually(async () => (await shownSeqs(page)).length, after.length);
  });

  it('Export downloads the whole log as JSON Lines, oldest first, each entry as the API gave it', async () => {
    const page = await openDecisions(viewport);
    await page.locator('[data-testid="decision"]').first().waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^decisions-\d{4}-\d{2}-\d{2}\.jsonl$/);
    // The browser may be a remote one (the run's shared Chromium): the file comes as a stream.
    const chunks: Buffer[] = [];
    for await (const chunk of await download.createReadStream()) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const log = await decisionLog(relay);
    expect(text).toBe(log.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
    // Byte for byte as served: each line is a run of the API's own answer text.
    const raw = (await relay.api('GET', '/api/v1/decisions?limit=500')).text;
    const missing = text
      .trimEnd()
      .split('\n')
      .filter((line) => !raw.includes(line));
    expect(missing).toEqual([]);
  });

  it('Verify checks the whole chain in the browser: "Chain intact: N entries"', async () => {
    const page = await openDecisions(viewport);
    await page.locator('[data-testid="decision"]').first().waitFor();
    await page.getByRole('button', { name: 'Verify' }).click();
    const result = page.locator('[data-testid="verify-result"][data-state="intact"]');
    await result.waitFor();
    const count = (await decisionLog(relay)).length;
    expect(await result.textContent()).toBe(`Chain intact: ${count} entries`);
    expect(await result.getAttribute('role')).toBe('status');
    if (!phone) await screenshots(page, 'decisions');
  });

  it('Verify says where the chain breaks: an entry altered, or one left out, on its way to the page', async () => {
    // Entry 2's title edited in every GET /decisions answer (its stored hash kept).
    const page = await openDecisions(viewport, async (p) => {
      await p.route('**/api/v1/decisions?**', async (route) => {
        const res = await route.fetch();
        const body = await res.json();
        for (const entry of body.data) if (entry.seq === 2) entry.title = 'Refund order 1700?';
        await route.fulfill({ response: res, json: body });
      });
    });
    await page.locator('[data-testid="decision"][data-seq="2"]').filter({ hasText: 'Refund order 1700?' }).waitFor();
    await page.getByRole('button', { name: 'Verify' }).click();
    const broken = page.locator('[data-testid="verify-result"][data-state="broken"]');
    await broken.waitFor();
    expect(await broken.textContent()).toBe('Entry 2: hash does not match');
    expect(await broken.getAttribute('role')).toBe('alert');
    if (!phone) await screenshots(page, 'decisions-broken');

    // Entry 3 left out: the chain says it is missing.
    await page.unroute('**/api/v1/decisions?**');
    await page.route('**/api/v1/decisions?**', async (route) => {
      const res = await route.fetch();
      const body = await res.json();
      body.data = body.data.filter((entry: { seq: number }) => entry.seq !== 3);
      await route.fulfill({ response: res, json: body });
    });
    await page.getByRole('button', { name: 'Verify' }).click();
    await eventually(() => broken.textContent(), 'Entry 3: missing (the next entry is 4)');
  });
});
