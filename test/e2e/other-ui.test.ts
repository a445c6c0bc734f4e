/**
 * Another static UI served instead of ours (issue 26 item 3, last sentence): `npm start` with
 * RELAY_WEB_DIR = a tiny fake "other UI" that, like OpenGram's UI with an empty bootstrap secret,
 * calls the API with no Authorization header. Its users sign in on the relay's own page,
 * /relay-sign-in.html (served from web/public since the other UI lacks it, by the same rules as
 * every unhashed file), and the other UI's reads and writes then succeed on the session cookie
 * alone; the secret reaches no storage and no URL. A wrong secret is said so, as is the wait once
 * failed sign-ins are limited (429); signing out there takes the cookie away again.
 * Its pages' CSP allows inline styles, which such UIs set (OpenGram's toasts and drawers), while an
 * inline script is still refused (issue 33 item 19).
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { SIGN_IN_FILES, SIGN_IN_PAGE, SIGN_IN_SOURCE_DIR, UNHASHED_CACHE_CONTROL } from '../../lib/web-policy.js';
import { screenshots, useBrowser } from './support/browser.js';
import { expectWebSecurityHeaders } from './support/headers.js';
import { useRelay } from './support/relay.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHAT_TITLE = 'Made by the other UI';

/**
 * The other UI: an index.html and an external script that, with an empty bootstrap secret (so no
 * Authorization header), lists chats and creates one, and writes both statuses into the page.
 */
const otherUi = mkdtempSync(join(tmpdir(), 'chat-relay-other-ui-'));
writeFileSync(
  join(otherUi, 'index.html'),
  [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8" /><title>Other UI</title>',
    '<script src="/other-ui.js" defer></script>',
    // Inline styles as such UIs set them: a <style> element and style attributes (also set by its script).
    '<style>#styled-element { color: rgb(1, 2, 3); }</style>',
    // An inline script: the CSP refuses it, so the flag stays unset.
    '<script>window.inlineScriptRan = true;</script></head>',
    '<body><h1>Other UI</h1>',
    '<p id="styled-element">Styled by a style element</p>',
    '<p data-testid="styled-attribute" style="color: rgb(4, 5, 6)">Styled by an attribute</p>',
    '<p data-testid="styled-by-script">Styled by its script</p>',
    '<p>Read: <output data-testid="read-status">…</output></p>',
    '<p>Write: <output data-testid="write-status">…</output></p>',
    '</body></html>',
  ].join('\n'),
);
writeFileSync(
  join(otherUi, 'other-ui.js'),
  [
    "var bootstrapSecret = '';",
    "var headers = bootstrapSecret ? { authorization: 'Bearer ' + bootstrapSecret } : {};",
    "document.querySelector('[data-testid=\"styled-by-script\"]').setAttribute('style', 'color: rgb(7, 8, 9)');",
    "function show(id, status) { document.querySelector('[data-testid=\"' + id + '\"]').textContent = String(status); }",
    "fetch('/api/v1/chats', { headers: headers }).then(function (r) { show('read-status', r.status); });",
    "fetch('/api/v1/chats', { method: 'POST', headers: Object.assign({ 'content-type': 'application/json' }, headers),",
    `  body: JSON.stringify({ agentIds: ['assistant'], modelId: 'model-a', title: ${JSON.stringify(CHAT_TITLE)} }) })`,
    "  .then(function (r) { show('write-status', r.status); });",
  ].join('\n'),
);
afterAll(() => rmSync(otherUi, { recursive: true, force: true }));

const relay = useRelay({ env: { RELAY_WEB_DIR: otherUi } });
const chromium = useBrowser();
const contexts: BrowserContext[] = [];

async function freshPage(): Promise<Page> {
  const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  return context.newPage();
}
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

/** A request sent as written: status, headers, body. */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { hostname, port } = new URL(relay.url);
  return new Promise((ok, fail) => {
    const req = request({ host: hostname, port, method: 'GET', path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

const statusOf = (page: Page, id: string) =>
  page.getByTestId(id).filter({ hasNotText: '…' }).textContent({ timeout: 15_000 });

const chatsTitled = async (title: string) => {
  const res = await relay.api('GET', '/api/v1/chats?limit=100');
  return (res.body.data as { title: string }[]).filter((c) => c.title === title).length;
};

const hasSessionCookie = async (page: Page) =>
  (await page.context().cookies(`${relay.url}/api/v1`)).some((c) => c.name === 'relay_session');

describe('npm start with RELAY_WEB_DIR: the relay sign-in page beside another UI', () => {
  it('serves /relay-sign-in.html, .js and .css from web/public with the security headers, no-cache and ETags', async () => {
    for (const name of SIGN_IN_FILES) {
      const res = await raw(`/${name}`);
      expect([name, res.status]).toEqual([name, 200]);
      expect(res.body.equals(readFileSync(join(ROOT, SIGN_IN_SOURCE_DIR, name)))).toBe(true);
      expect(res.headers['cache-control']).toBe(UNHASHED_CACHE_CONTROL);
      expect(res.headers['content-type']).toMatch(/^text\/(html|javascript|css); charset=utf-8$/);
      expectWebSecurityHeaders(res.headers, relay.url, { foreignBuild: true });
      const again = await raw(`/${name}`, { 'if-none-match': String(res.headers.etag) });
      expect([name, again.status]).toEqual([name, 304]);
    }
    // The other UI's own files and routes are its own; nothing else of web/public is served.
    expect((await raw('/')).body.toString()).toContain('<title>Other UI</title>');
    expect((await raw('/chats/abc')).body.toString()).toContain('<title>Other UI</title>');
    for (const path of ['/sw.js', '/manifest.webmanifest', '/favicon.svg', '/relay-sign-in.txt']) {
      expect([path, (await raw(path)).status]).toEqual([path, 404]);
    }
  });

  it('a sign-in file the other UI has itself is its own', async () => {
    const own = join(otherUi, 'relay-sign-in.css');
    writeFileSync(own, '/* the other UI’s own */\n');
    try {
      expect((await raw('/relay-sign-in.css')).body.toString()).toBe('/* the other UI’s own */\n');
    } finally {
      rmSync(own);
    }
    expect(
      (await raw('/relay-sign-in.css')).body.equals(readFileSync(join(ROOT, SIGN_IN_SOURCE_DIR, 'relay-sign-in.css'))),
    ).toBe(true);
  });
});

describe('the CSP of another UI', () => {
  it('lets its inline styles apply with no violation reported, and still refuses an inline script', async () => {
    const page = await freshPage();
    // Registered before the page's own code (the DevTools protocol, outside the page's CSP).
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.effectiveDirective} ${e.blockedURI}`));
    });
    const res = await page.goto(`${relay.url}/`);
    expectWebSecurityHeaders(await res!.allHeaders(), relay.url, { foreignBuild: true });
    await page.getByTestId('read-status').filter({ hasNotText: '…' }).waitFor();
    const colorOf = (selector: string) => page.locator(selector).evaluate((e) => getComputedStyle(e).color);
    expect(await colorOf('#styled-element')).toBe('rgb(1, 2, 3)');
    expect(await colorOf('[data-testid="styled-attribute"]')).toBe('rgb(4, 5, 6)');
    expect(await colorOf('[data-testid="styled-by-script"]')).toBe('rgb(7, 8, 9)');
    // Violations are reported asynchronously: let them arrive.
    await page.waitForTimeout(300);
    const violations = await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);
    expect(violations.filter((v) => v.startsWith('style-src'))).toEqual([]);
    expect(violations.filter((v) => !v.startsWith('style-src'))).toEqual(['script-src-elem inline']);
    expect(
      await page.evaluate(() => (window as unknown as { inlineScriptRan?: boolean }).inlineScriptRan),
    ).toBeUndefined();
    await screenshots(page, 'other-ui-styled');
  });
});

describe('another UI with an empty bootstrap secret, signed in on /relay-sign-in.html', () => {
  it('gets 401 before, signs in, lands on next, and then reads and writes on the cookie alone', async () => {
    const page = await freshPage();
    const urls: string[] = [];
    const authorization: string[] = [];
    page.on('request', (r) => {
      urls.push(r.url());
      void r.allHeaders().then((h) => h.authorization && authorization.push(h.authorization));
    });
    await page.goto(`${relay.url}/`);
    expect(await statusOf(page, 'read-status')).toBe('401');
    expect(await statusOf(page, 'write-status')).toBe('401');
    expect(await chatsTitled(CHAT_TITLE)).toBe(0);

    await page.goto(`${relay.url}${SIGN_IN_PAGE}?next=/`);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.waitFor();
    await screenshots(page, 'relay-sign-in');
    await page.getByLabel('Instance secret').fill(relay.secret!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${relay.url}/`);
    expect(await statusOf(page, 'read-status')).toBe('200');
    expect(await statusOf(page, 'write-status')).toBe('201');
    expect(await chatsTitled(CHAT_TITLE)).toBe(1);
    expect(await hasSessionCookie(page)).toBe(true);

    // The secret went nowhere but the sign-in's body: no header, URL, storage or page holds it.
    expect(authorization).toEqual([]);
    const stored = await page.evaluate(async () => ({
      local: Object.entries(localStorage),
      session: Object.entries(sessionStorage),
      cookie: document.cookie,
      html: document.documentElement.outerHTML,
      url: location.href,
      databases: (await indexedDB.databases()).map((db) => db.name),
      caches: await caches.keys(),
    }));
    const seen = JSON.stringify({ stored, urls });
    expect(seen).not.toContain(relay.secret!);
    expect(seen).not.toContain(encodeURIComponent(relay.secret!));
    expect(urls).toContain(`${relay.url}/api/v1/auth/session`);

    // Back on the sign-in page: it says so and links on, to `next` only when it is a path here.
    await page.goto(`${relay.url}${SIGN_IN_PAGE}?next=${encodeURIComponent('/chats/abc?tab=1#end')}`);
    const status = page.getByTestId('relay-signed-in');
    await status.waitFor();
    expect(await status.textContent()).toBe('This browser is signed in.');
    expect(await page.getByRole('link', { name: 'Continue' }).getAttribute('href')).toBe('/chats/abc?tab=1#end');
    await screenshots(page, 'relay-sign-in-signed-in');
    for (const next of ['//evil.example/', '/\\evil.example', '/.//evil.example', 'https://evil.example/', 'chats']) {
      await page.goto(`${relay.url}${SIGN_IN_PAGE}?next=${encodeURIComponent(next)}`);
      await status.waitFor();
      expect([next, await page.getByRole('link', { name: 'Continue' }).getAttribute('href')]).toEqual([next, '/']);
    }

    // Sign out there: the form again, and the other UI is refused again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await form.waitFor();
    expect(await page.getByRole('status').filter({ hasText: 'Signed out.' }).count()).toBe(1);
    expect(await hasSessionCookie(page)).toBe(false);
    await page.goto(`${relay.url}/`);
    expect(await statusOf(page, 'read-status')).toBe('401');
    expect(await chatsTitled(CHAT_TITLE)).toBe(1);
  });

  it('a wrong secret: the alert "Wrong secret", the field cleared, no cookie, still on the page', async () => {
    const page = await freshPage();
    await page.goto(`${relay.url}${SIGN_IN_PAGE}?next=/`);
    await page.getByLabel('Instance secret').fill(`${relay.secret}-wrong`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Wrong secret');
    expect(await page.getByLabel('Instance secret').inputValue()).toBe('');
    expect(await hasSessionCookie(page)).toBe(false);
    expect(new URL(page.url()).pathname).toBe(SIGN_IN_PAGE);
    await screenshots(page, 'relay-sign-in-wrong');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshots(page, 'relay-sign-in-wrong-dark');
  });

  // Last in the file: it uses up this client's failed sign-ins for ten minutes.
  it('past the failed sign-ins allowed, the page says how long to wait (429 Retry-After)', async () => {
    let limited: Response | undefined;
    for (let i = 0; i < 12 && !limited; i++) {
      const res = await fetch(`${relay.url}/api/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: relay.url },
        body: JSON.stringify({ secret: 'wrong' }),
      });
      if (res.status === 429) limited = res;
    }
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
    const page = await freshPage();
    await page.goto(`${relay.url}${SIGN_IN_PAGE}`);
    await page.getByLabel('Instance secret').fill(relay.secret!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Too many attempts' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Too many attempts\. Try again in \d+ (seconds|minutes)\.$/);
    expect(await hasSessionCookie(page)).toBe(false);
  });
});
