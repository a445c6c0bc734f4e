/**
 * The browser of the end-to-end tests: Debian's `chromium` package (CHROMIUM_PATH, default
 * /usr/bin/chromium; .ci/run installs it), driven by playwright-core, which downloads nothing.
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

function launchOptions(extraArgs: readonly string[]) {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}: install Debian's chromium (apt-get install chromium; .ci/run does) ` +
        'or set CHROMIUM_PATH to a Chromium or Chrome executable.',
    );
  }
  return { executablePath: CHROMIUM_PATH, headless: true, args: [...CHROMIUM_ARGS, ...extraArgs] };
}

/** A browser of the caller's own (with `extraArgs` added to the defaults), on playwright's fresh, empty profile. */
export function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch(launchOptions(extraArgs));
}

/**
 * The run's shared browser: the default switches, listening on a loopback WebSocket whose path is
 * a random id. Playwright kills it if this process exits or takes SIGINT, SIGTERM or SIGHUP.
 */
export function launchBrowserServer(): Promise<BrowserServer> {
  return chromium.launchServer({ ...launchOptions([]), host: '127.0.0.1' });
}

/**
 * A connection to the shared browser. Each connection sees only the contexts it creates, and
 * closing it (browser.close()) closes them: the browser stays up for the other files.
 */
export function connectBrowser(wsEndpoint: string): Promise<Browser> {
  return chromium.connect(wsEndpoint);
}
