/**
 * The browser session seen from a real browser (issue 26 items 2 and 5): after a sign-in made by
 * the page itself (fetch on the served origin), the session cookie is invisible to the page's
 * scripts (HttpOnly), no storage holds the secret, an EventSource opens on the cookie alone (no
 * token in its URL, no header), and a write from a page of another origin is refused: from
 * another site (http://localhost:…, not http://127.0.0.1:…) the SameSite=Strict cookie is not
 * even sent (401); from another origin of the same site (another port) it is, and the Origin
 * check refuses it (403). A forged Origin from a non-browser client with a valid cookie is
 * test/integration/auth/session.test.ts's.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import { useRelay } from './support/relay.js';
import type { Relay } from './support/relay.js';

const relay = useRelay();
const chromium = useBrowser();

/** Signs the page's browser in the way the app does: the page POSTs the secret, same-origin. */
async function signInFromPage(page: Page, secret: string): Promise<number> {
  return page.evaluate(async (value) => {
    const res = await fetch('/api/v1/auth/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ secret: value }),
    });
    return res.status;
  }, secret);
}

/** Opens an EventSource in the page and says whether it opened or failed. */
const eventSourceOutcome = (page: Page, path: string) =>
  page.evaluate(
    (url) =>
      new Promise<string>((resolve) => {
        const source = new EventSource(url);
        source.onopen = () => {
          source.close();
          resolve('open');
        };
        source.onerror = () => {
          source.close();
          resolve('error');
        };
      }),
    path,
  );

let signedIn: BrowserContext;
let page: Page;
beforeAll(async () => {
  signedIn = await chromium.browser.newContext();
  page = await signedIn.newPage();
  await page.goto(`${relay.url}/`);
  expect(await signInFromPage(page, relay.secret!)).toBe(204);
});
afterAll(async () => {
  await signedIn?.close();
});

describe('the session cookie in a real browser', () => {
  it('is HttpOnly, SameSite=Strict and on /api: scripts of the page cannot read it, even under /api', async () => {
    const all = await signedIn.cookies(`${relay.url}/api/v1/chats`);
    const cookies = all.filter((c) => c.name === 'relay_session');
    expect(cookies).toEqual([
      expect.objectContaining({
        name: 'relay_session',
        httpOnly: true,
        sameSite: 'Strict',
        path: '/api',
        secure: false,
      }),
    ]);
    // Beside it only the page-readable hint: the session's expiry, nothing secret.
    expect(all.filter((c) => c.name !== 'relay_session')).toEqual([
      expect.objectContaining({ name: 'relay_signed_in', httpOnly: false, sameSite: 'Strict', path: '/' }),
    ]);
    expect(all.find((c) => c.name === 'relay_signed_in')!.value).toMatch(/^\d+$/);
    expect(cookies[0]!.value).not.toContain(relay.secret!);
    // document.cookie at a path the cookie applies to: it would be listed there were it not HttpOnly.
    const apiPage = await signedIn.newPage();
    await apiPage.goto(`${relay.url}/api/v1/health`);
    expect(await apiPage.evaluate(() => document.cookie)).not.toContain('relay_session');
    await apiPage.close();
    expect(await page.evaluate(() => document.cookie)).not.toContain('relay_session');
  });

  it('no storage of the origin holds the secret, nor the page itself, once the app has loaded signed in', async () => {
    await page.reload();
    // Signed in, the app shows the inbox (its nav "Chats") rather than the sign-in form.
    await page.getByRole('navigation', { name: 'Chats' }).waitFor();
    const stored = await page.evaluate(async () => ({
      local: Object.entries(localStorage),
      session: Object.entries(sessionStorage),
      cookie: document.cookie,
      html: document.documentElement.outerHTML,
      url: location.href,
      databases: (await indexedDB.databases()).map((db) => db.name),
      caches: await caches.keys(),
    }));
    expect(JSON.stringify(stored)).not.toContain(relay.secret!);
    expect(JSON.stringify(stored)).not.toContain(Buffer.from(relay.secret!).toString('base64'));
  });

  it('an EventSource on the stream opens with the cookie alone (no token, no header); without the cookie it fails', async () => {
    // The headers as sent arrive after the request event: wait for them, not only for the open.
    const pending: Promise<{ url: string; headers: Record<string, string> }>[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/events/stream?probe'))
        pending.push(request.allHeaders().then((headers) => ({ url: request.url(), headers })));
    });
    expect(await eventSourceOutcome(page, '/api/v1/events/stream?probe=1')).toBe('open');
    const requests = await Promise.all(pending);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url).not.toMatch(/token=/);
    expect(requests[0]!.headers.authorization).toBeUndefined();
    expect(requests[0]!.headers.cookie).toMatch(/^relay_session=/);

    const fresh = await chromium.browser.newContext();
    const stranger = await fresh.newPage();
    await stranger.goto(`${relay.url}/`);
    expect(await eventSourceOutcome(stranger, '/api/v1/events/stream?probe=2')).toBe('error');
    await fresh.close();
  });
});

describe('a write from a page of another origin, with the signed-in browser', () => {
  let evil: Server;
  let evilPort: number;
  const title = 'Cross-site write';

  beforeAll(async () => {
    // The attacker's page: a simple (not preflighted) POST with the browser's credentials, by fetch
    // and by a form, to the relay's chat creation.
    evil = createServer((req, res) => {
      const target = `${relay.url}/api/v1/chats`;
      const body = JSON.stringify({ agentIds: ['assistant'], modelId: 'model-a', title });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        req.url === '/form'
          ? `<!doctype html><form method="post" action="${target}" enctype="text/plain">` +
              `<input name='${body.slice(0, -1)}, "x": "' value='"}'></form>` +
              `<script>document.forms[0].submit()</script>`
          : `<!doctype html><script>fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', ` +
              `credentials: 'include', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} })` +
              `.then(() => { document.title = 'sent'; }, () => { document.title = 'failed'; });</script>`,
      );
    });
    await new Promise<void>((ok) => evil.listen(0, '127.0.0.1', ok));
    evilPort = (evil.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((ok) => evil?.close(ok));
  });

  /**
   * Opens the attacker's page in the signed-in browser and returns the relay's answer to the write
   * it makes, with the headers the browser really sent: Chromium's own report of them (DevTools'
   * requestWillBeSentExtraInfo, cookies included; playwright's request headers are the provisional
   * ones, without cookies, for these requests).
   */
  async function attempt(origin: string, path: string) {
    const target = `${relay.url}/api/v1/chats`;
    const attacker = await signedIn.newPage();
    const cdp = await signedIn.newCDPSession(attacker);
    const ids = new Map<string, string>();
    const extraInfo = new Map<string, Record<string, string>>();
    let resolveSent: (headers: Record<string, string>) => void;
    const sent = new Promise<Record<string, string>>((ok) => (resolveSent = ok));
    const settle = (requestId: string) => {
      const headers = extraInfo.get(requestId);
      if (ids.get(requestId) === target && headers)
        resolveSent(Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])));
    };
    cdp.on('Network.requestWillBeSent', ({ requestId, request }) => {
      ids.set(requestId, request.url);
      settle(requestId);
    });
    cdp.on('Network.requestWillBeSentExtraInfo', ({ requestId, headers }) => {
      extraInfo.set(requestId, headers as Record<string, string>);
      settle(requestId);
    });
    await cdp.send('Network.enable');
    try {
      const answered = attacker.waitForResponse((res) => res.url() === target && res.request().method() === 'POST');
      await attacker.goto(`${origin}${path}`);
      return { status: (await answered).status(), sent: await sent };
    } finally {
      await attacker.close();
    }
  }

  it('from another site (localhost): the SameSite=Strict cookie is not sent, 401', async () => {
    for (const path of ['/', '/form']) {
      const { status, sent } = await attempt(`http://localhost:${evilPort}`, path);
      expect([path, status, sent.cookie]).toEqual([path, 401, undefined]);
      expect(sent.origin).toBe(`http://localhost:${evilPort}`);
    }
  });

  it('from another origin of the same site (another port): the cookie is sent, the Origin check refuses it, 403', async () => {
    for (const path of ['/', '/form']) {
      const { status, sent } = await attempt(`http://127.0.0.1:${evilPort}`, path);
      expect([path, status]).toEqual([path, 403]);
      expect(sent.cookie).toMatch(/^relay_session=/);
    }
  });

  it('and nothing was written, while the same write from the relay page itself succeeds', async () => {
    const own = await page.evaluate(async () => {
      const res = await fetch('/api/v1/chats', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ agentIds: ['assistant'], modelId: 'model-a', title: 'Same-origin write' }),
      });
      return res.status;
    });
    expect(own).toBe(201);
    const chats = await relay.api('GET', '/api/v1/chats');
    expect(chats.status).toBe(200);
    expect(chats.text).toContain('Same-origin write');
    expect(chats.text).not.toContain(title);
  });
});

/** Errors the page logs (console errors, failed loads included, and uncaught exceptions). */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

const signInForm = (page: Page) => page.getByRole('form', { name: 'Sign in' });
const inbox = (page: Page) => page.getByRole('navigation', { name: 'Chats' });

async function signInWithForm(page: Page, secret: string): Promise<void> {
  await page.getByLabel('Instance secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await inbox(page).waitFor();
}

/** What a replayed cookie gets: a read, a same-origin write and the event stream, from outside the browser. */
async function replayed(target: Relay, cookie: string): Promise<number[]> {
  const headers = { cookie: `relay_session=${cookie}` };
  const read = await fetch(`${target.url}/api/v1/chats`, { headers });
  const write = await fetch(`${target.url}/api/v1/chats`, {
    method: 'POST',
    headers: { ...headers, origin: target.url, 'content-type': 'application/json' },
    body: JSON.stringify({ agentIds: ['assistant'], modelId: 'model-a' }),
  });
  const controller = new AbortController();
  const stream = await fetch(`${target.url}/api/v1/events/stream`, { headers, signal: controller.signal });
  controller.abort();
  return [read.status, write.status, stream.status];
}

describe('signing out in the browser revokes the session; ordinary loads log no console error', () => {
  it('signed in and signed out, a load logs nothing; the cookie of a signed-out browser, replayed, is 401 everywhere', async () => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const tab = await context.newPage();
      // The first visit of a new browser to an instance whose reads need the secret learns that from a
      // 401 (docs/web-app.md "Browser sessions"); the loads below are the ones it then makes.
      await tab.goto(`${relay.url}/`);
      await signInForm(tab).waitFor();
      await signInWithForm(tab, relay.secret!);
      const errors = consoleErrors(tab);
      // A load of its own (whatever the page before still had in flight is left behind).
      const load = async () => {
        await tab.goto('about:blank');
        errors.length = 0;
        await tab.goto(`${relay.url}/`);
      };
      await load();
      await inbox(tab).waitFor();
      await tab.waitForLoadState('networkidle');
      expect(errors).toEqual([]);
      await screenshots(tab, 'session-load-signed-in');
      const cookie = (await context.cookies(`${relay.url}/api/v1`)).find((c) => c.name === 'relay_session')!.value;
      expect(await replayed(relay, cookie)).toEqual([200, 201, 200]);

      await tab.getByRole('button', { name: 'Account' }).click();
      await tab.getByRole('button', { name: 'Sign out', exact: true }).click();
      await signInForm(tab).waitFor();
      expect((await context.cookies(`${relay.url}/`)).map((c) => c.name)).toEqual([]);
      await load();
      await signInForm(tab).waitFor();
      await tab.waitForLoadState('networkidle');
      expect(errors).toEqual([]);
      await screenshots(tab, 'session-load-signed-out');
      // The cookie the browser held, replayed: refused on a read, a write and the stream.
      expect(await replayed(relay, cookie)).toEqual([401, 401, 401]);
      // Signing in again works.
      await signInWithForm(tab, relay.secret!);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});

describe('a new browser on an instance whose reads are open', () => {
  const open = useRelay({ readsNeedSecret: false });

  it('its very first load, signed out, logs nothing and shows the sign-in form', async () => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const tab = await context.newPage();
      const errors = consoleErrors(tab);
      await tab.goto(`${open.url}/`);
      await signInForm(tab).waitFor();
      await tab.waitForLoadState('networkidle');
      expect(errors).toEqual([]);
      await signInWithForm(tab, open.secret!);
      await tab.reload();
      await inbox(tab).waitFor();
      await tab.waitForLoadState('networkidle');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
