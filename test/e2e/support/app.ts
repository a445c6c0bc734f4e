/**
 * The app as a signed-in person sees it, for the flow tests: a fresh browser context holding a
 * session cookie (obtained as the sign-in form obtains it; the sign-in flow itself has its own
 * tests), a page on one of the app's routes with its live connection open, and the seeding an
 * agent would do through the API with the bearer secret.
 */
import { expect } from '@jest/globals';
import type { Browser, BrowserContext, Locator, Page, Request } from 'playwright-core';
import { seedChat, sessionCookies } from './relay.js';
import type { Relay } from './relay.js';

export interface OpenApp {
  context: BrowserContext;
  page: Page;
  /** Every /events/stream request the page made, and how many are open now. */
  streams: StreamLog;
  close(): Promise<void>;
}

export interface StreamLog {
  requests: Request[];
  open(): number;
  /** The most streams open at once so far. */
  maxOpen(): number;
}

/** Watches the page's event-stream requests: opened minus finished (answered to the end, failed or aborted). */
export function watchStreams(page: Page): StreamLog {
  const requests: Request[] = [];
  const done = new Set<Request>();
  let open = 0;
  let maxOpen = 0;
  const isStream = (r: Request) => new URL(r.url()).pathname === '/api/v1/events/stream';
  page.on('request', (r) => {
    if (!isStream(r)) return;
    requests.push(r);
    open++;
    maxOpen = Math.max(maxOpen, open);
  });
  const finish = (r: Request) => {
    if (!isStream(r) || done.has(r)) return;
    done.add(r);
    open--;
  };
  page.on('requestfinished', finish);
  page.on('requestfailed', finish);
  return { requests, open: () => open, maxOpen: () => maxOpen };
}

/** A signed-in page on `path`, its live connection open. */
export async function openApp(
  browser: Browser,
  relay: Relay,
  path = '/',
  viewport = { width: 1280, height: 800 },
  options: {
    liveEvents?: boolean;
    /** Called with the new page before it loads anything (e.g. to watch every request it makes). */
    onPage?: (page: Page) => void | Promise<void>;
  } = {},
): Promise<OpenApp> {
  const context = await browser.newContext({ viewport });
  // Without live events the page's event stream is refused (the browser keeps retrying: connecting).
  if (options.liveEvents === false) await context.route('**/api/v1/events/stream**', (route) => route.abort());
  await context.addCookies(await sessionCookies(relay));
  const page = await context.newPage();
  const streams = watchStreams(page);
  await options.onPage?.(page);
  await page.goto(`${relay.url}${path}`);
  await connection(page, options.liveEvents === false ? 'connecting' : 'open');
  return { context, page, streams, close: () => context.close() };
}

/** Waits for the live connection indicator to show `state`. */
export function connection(page: Page, state: 'open' | 'connecting' | 'offline', timeout = 20_000): Promise<void> {
  return page.locator(`[data-testid="connection"][data-state="${state}"]`).waitFor({ timeout });
}

export const chatItem = (page: Page, chatId: string): Locator =>
  page.locator(`[data-testid="chat-item"][data-chat-id="${chatId}"]`);

/** The chat ids of the list shown, in order. */
export const listedIds = (page: Page): Promise<string[]> =>
  page.locator('[data-testid="chat-item"]').evaluateAll((items) => items.map((i) => i.getAttribute('data-chat-id')!));

export const messages = (page: Page): Locator => page.getByRole('log', { name: 'Messages' }).getByTestId('message');
export const composer = (page: Page): Locator => page.getByRole('textbox', { name: 'Message', exact: true });

/** A message whose body contains `text`. */
export const messageWith = (page: Page, text: string): Locator =>
  messages(page).filter({ has: page.getByTestId('message-body').filter({ hasText: text }) });

// ---- Seeding through the API, as an agent (bearer secret) -------------------------------------

async function ok<T = any>(relay: Relay, method: string, path: string, body?: unknown, status = [200, 201, 204]) {
  const res = await relay.api<T>(method, path, body);
  if (!status.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

export { seedChat };

export async function postMessage(
  relay: Relay,
  chatId: string,
  content: string,
  role: 'agent' | 'user' = 'agent',
): Promise<{ id: string; created_at: string }> {
  const sender = role === 'agent' ? { senderId: 'assistant' } : {};
  return ok(relay, 'POST', `/api/v1/chats/${chatId}/messages`, { role, content, ...sender });
}

export async function getChat(relay: Relay, chatId: string): Promise<any> {
  return ok(relay, 'GET', `/api/v1/chats/${chatId}`);
}

/** All the chat's messages, oldest first. */
export async function allMessages(relay: Relay, chatId: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await ok(
      relay,
      'GET',
      `/api/v1/chats/${chatId}/messages?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    all.push(...page.data);
    cursor = page.cursor.hasMore ? page.cursor.next : null;
  } while (cursor);
  return all.reverse();
}

export async function createRequest(relay: Relay, chatId: string, request: Record<string, unknown>): Promise<any> {
  return ok(relay, 'POST', `/api/v1/chats/${chatId}/requests`, request);
}

export async function getRequest(relay: Relay, chatId: string, requestId: string): Promise<any> {
  const list: any = await ok(relay, 'GET', `/api/v1/chats/${chatId}/requests?status=all`);
  const found = list.data.find((r: { id: string }) => r.id === requestId);
  if (!found) throw new Error(`request ${requestId} not in chat ${chatId}`);
  return found;
}

export { ok as apiOk };

/** Fails the test if the page ever shows a dialog (alert, confirm, prompt). */
export function forbidDialogs(page: Page): { dialogs: string[] } {
  const seen = { dialogs: [] as string[] };
  page.on('dialog', (dialog) => {
    seen.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  return seen;
}

/** Polls until `read` gives `expected` (deep equality), for server state that follows a click. */
export async function eventually<T>(read: () => Promise<T>, expected: T, timeout = 10_000): Promise<void> {
  const until = Date.now() + timeout;
  let last: T | undefined;
  for (;;) {
    last = await read();
    try {
      expect(last).toEqual(expected);
      return;
    } catch (error) {
      if (Date.now() > until) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
