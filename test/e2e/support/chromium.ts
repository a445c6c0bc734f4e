/**
 * The browsers of the end-to-end tests, both from Debian's Chromium (.ci/run installs both),
 * driven by playwright-core, which downloads nothing:
 *
 * - the flows run in Chromium's **headless shell** (package `chromium-headless-shell`;
 *   CHROMIUM_HEADLESS_SHELL, default /usr/bin/chromium-headless-shell), the same Blink and V8
 *   without the desktop browser around them, and Playwright's own default for headless runs.
 *   Measured here (2 cores): a fresh context opening the signed-in app took 1.6 s and 0.7 s of
 *   the browser process's CPU in the full browser, 0.7 s and 0.17 s in the shell; the e2e phase
 *   638 s against about 400 s.
 * - the **full browser** (package `chromium`; CHROMIUM_PATH, default /usr/bin/chromium) where the
 *   shell has no such feature: notifications, the permission prompt and push (notifications.test.ts,
 *   `useBrowser({ full: true })`).
 *
 * Without the shell (not installed, or CHROMIUM_HEADLESS_SHELL=off), every file runs in the full
 * browser, which is also how to run the whole suite in it.
 *
 * Headless, no sandbox (CI runs as root in a container), no GPU, and none of the browser's own
 * traffic (component updates, sync, background networking): the only requests are the tests'.
 *
 * No jest here: the e2e project's globalSetup (browser-setup.mjs) loads this module outside the
 * test framework to start the run's shared browser.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, BrowserServer } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const shellSetting = process.env.CHROMIUM_HEADLESS_SHELL ?? '/usr/bin/chromium-headless-shell';
/** The headless shell the flows run in, or undefined (off, or not installed): the full browser then. */
export const HEADLESS_SHELL_PATH = shellSetting !== 'off' && existsSync(shellSetting) ? shellSetting : undefined;

/** Which browser: the headless shell where there is one (`shell`), or the full browser (`full`). */
export type BrowserKind = 'shell' | 'full';

/** Where globalSetup puts the shared browser's endpoint for the test files (workers inherit it). */
export const BROWSER_WS_ENV = 'E2E_BROWSER_WS';

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

function launchOptions(extraArgs: readonly string[], kind: BrowserKind) {
  if (kind === 'shell' && HEADLESS_SHELL_PATH)
    return { executablePath: HEADLESS_SHELL_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] };
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium; .ci/run does) ` +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable.',
    );
  }
  return { executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] };
}

/** A browser of the caller's own (with `extraArgs` added to the defaults), on playwright's fresh, empty profile. */
export function launchBrowser(extraArgs: readonly string[] = [], kind: BrowserKind = 'shell'): Promise<Browser> {
  return chromium.launch(launchOptions(extraArgs, kind));
}

/**
 * The run's shared browser: the default switches, listening on a loopback WebSocket whose path is
 * a random id. Playwright kills it if this process exits or takes SIGINT, SIGTERM or SIGHUP.
 */
export function launchBrowserServer(): Promise<BrowserServer> {
  return chromium.launchServer({ ...launchOptions([], 'shell'), host: '127.0.0.1' });
}

/**
 * A connection to the shared browser. Each connection sees only the contexts it creates, and
 * closing it (browser.close()) closes them: the browser stays up for the other files.
 */
export function connectBrowser(wsEndpoint: string): Promise<Browser> {
  return chromium.connect(wsEndpoint);
}
