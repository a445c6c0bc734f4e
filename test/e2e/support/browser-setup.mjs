/**
 * The e2e project's globalSetup: one Chromium for the whole run instead of one per test file
 * (a launch and its shutdown cost about 3 s of CPU and a few seconds of wall time each on this
 * project's 2-core machine). Test files connect to it (support/browser.ts useBrowser) and work in
 * contexts of their own, as before: fresh, empty, closed with the file. A file that needs other
 * switches (a fake microphone) still launches its own.
 *
 * Plain ESM loading the TypeScript module through tsx, as test/support/global-setup.mjs does:
 * globalSetup runs outside jest's module system. The endpoint reaches the workers through the
 * environment (they are started after this). browser-teardown.mjs closes the browser; should
 * this process end any other way (a signal, a crash), playwright kills it.
 */
import { tsImport } from 'tsx/esm/api';

export default async function browserSetup() {
  const { launchBrowserServer, BROWSER_WS_ENV } = await tsImport('./chromium.ts', import.meta.url);
  const server = await launchBrowserServer();
  process.env[BROWSER_WS_ENV] = server.wsEndpoint();
  globalThis.__e2eBrowser__ = server;
}
