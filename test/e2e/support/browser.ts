/**
 * The browser of a test file, and its screenshots. The browser is the run's shared Chromium
 * (started by the e2e project's globalSetup, support/browser-setup.mjs; switches and path in
 * support/chromium.ts), reached through a connection of the file's own: the file's contexts are
 * fresh and empty, invisible to other files, and closed with it. A file asking for the full browser
 * (support/chromium.ts says which runs what) or for extra switches
 * (or run without that globalSetup) launches a Chromium of its own, on a fresh profile.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { BROWSER_WS_ENV, connectBrowser, launchBrowser } from './chromium.js';

export { CHROMIUM_PATH, FAKE_MICROPHONE_ARGS, launchBrowser } from './chromium.js';

/**
 * One browser for the test file: a connection to the shared one (the headless shell where there
 * is one: support/chromium.ts), or its own launch: with `args` (added to the defaults), or the
 * full browser (`full`: notifications, the permission prompt, push). Closed in afterAll (failed
 * tests included): the connection's contexts go with it, the shared browser stays.
 */
export function useBrowser(options: { args?: readonly string[]; full?: boolean } = {}): { browser: Browser } {
  const holder = {} as { browser: Browser };
  beforeAll(async () => {
    const shared = process.env[BROWSER_WS_ENV];
    const own = options.full || options.args?.length;
    holder.browser =
      shared && !own
        ? await connectBrowser(shared)
        : await launchBrowser(options.args, options.full ? 'full' : 'shell');
  });
  afterAll(async () => {
    await holder.browser?.close();
  });
  return holder;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const SCREENSHOT_DIR = join(ROOT, 'test-output', 'screenshots');
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/**
 * Writes test-output/screenshots/<name>-<width>.png at each of VIEWPORTS (desktop, then phone),
 * and puts the page back to the viewport it had. Returns the files written.
 */
export async function screenshots(page: Page, name: string): Promise<string[]> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const before = page.viewportSize();
  const files: string[] = [];
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    const path = join(SCREENSHOT_DIR, `${name}-${viewport.width}.png`);
    await page.screenshot({ path, fullPage: false });
    files.push(path);
  }
  if (before) await page.setViewportSize(before);
  return files;
}
