/**
 * The e2e project's globalSetup: one Chromium for the whole run instead of one per test file
 * (a launch and its shutdown cost about 3 s of CPU and a few seconds of wall time each on this
 * project's 2-core machine). Test files connect to it (support/browser.ts useBrowser) and work in
 * contexts of their own, as before: fresh, empty, closed with the file. A file that needs other
 * switches (a fake microphone) still launches its own.
 *
 * It also starts the run's one DynamoDB Local (in memory), which every file's `npm start` uses
 * through DYNAMODB_ENDPOINT, each with a table of its own (support/relay.ts), instead of
 * launching a JVM per file: measured, a file's JVM took 10 to 11 s of CPU (its start about 4 s,
 * the rest its first requests through a cold JIT), the shared one warms up once.
 *
 * Plain ESM loading the TypeScript module through tsx, as test/support/global-setup.mjs does:
 * globalSetup runs outside jest's module system. The endpoint reaches the workers through the
 * environment (they are started after this). browser-teardown.mjs closes the browser; should
 * this process end any other way (a signal, a crash), playwright kills it.
 */
import { tsImport } from 'tsx/esm/api';

export default async function browserSetup() {
  const { launchBrowserServer, BROWSER_WS_ENV } = await tsImport('./chromium.ts', import.meta.url);
  const { startDynamo } = await tsImport('../../../local/dynamo.ts', import.meta.url);
  const [server, dynamo] = await Promise.all([launchBrowserServer(), startDynamo()]);
  globalThis.__e2eDynamo__ = dynamo;
  process.env.E2E_DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.once('exit', () => dynamo.process.kill('SIGKILL'));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      dynamo.process.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
  process.env[BROWSER_WS_ENV] = server.wsEndpoint();
  globalThis.__e2eBrowser__ = server;
}
