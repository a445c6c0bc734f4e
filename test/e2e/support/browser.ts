/**
 * The browser of the end-to-end tests: Debian's `chromium` package (CHROMIUM_PATH, default
 * /usr/bin/chromium; .ci/run installs it), driven by playwright-core, which downloads nothing.
 * Headless, no sandbox (CI runs as root in a container), no GPU, and none of the browser's own
 * traffic (component updates, sync, background networking): the only requests are the tests'.
 * Each launch gets playwright's fresh, empty profile folder.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Switches a test file may add, e.g. a fake microphone: `--use-fake-ui-for-media-stream` (grant
 * getUserMedia without asking) and `--use-fake-device-for-media-stream` (a generated tone).
 */
export const FAKE_MICROPHONE_ARGS = ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];

export function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium; .ci/run does) ` +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/** One browser for the test file (with `args` added to the defaults), closed in afterAll (failed tests included). */
export function useBrowser(options: { args?: readonly string[] } = {}): { browser: Browser } {
  const holder = {} as { browser: Browser };
  beforeAll(async () => {
    holder.browser = await launchBrowser(options.args);
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
