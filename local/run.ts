/**
 * The local runtime that `npm start` runs (local/main.ts launches it, precompiled): boots
 * DynamoDB Local and the SQS emulator (both keep their data under DATA_DIR between runs),
 * creates the table and queues as the stack does, and serves every route on 127.0.0.1:PORT with
 * the same handlers Lambda runs.
 *
 * The JVM's start (about 2.8 s) is the floor, so it is launched first, with nothing but Node's
 * built-ins loaded, and everything else happens while it boots: the configuration check and the
 * VAPID key pair, the emulators, loading every handler. Only the table, then the background jobs
 * and the listener, wait for it. Each step prints a progress line with the time since start.
 *
 * It also serves the web app at `/` (local/web-app.ts): the built web/dist, rebuilt first when its
 * sources changed (local/web-build.ts; the build also overlaps the JVM's start), or the folder
 * RELAY_WEB_DIR names (another static build, as the stack's `-c webDir`), served as it is. A
 * failed build stops nothing: the API starts, and the app's paths answer 503 saying why.
 *
 * Environment: PORT (3000), CONFIG_PATH (a JSON file shaped like the contract's §12
 * configuration), DATA_DIR (./.data), RELAY_WEB_DIR (the built web/dist), and the §12.2
 * OPENGRAM_* overrides. DYNAMODB_ENDPOINT names a DynamoDB Local already running on this machine
 * to use instead of launching one (the data then lives there, not in DATA_DIR), and TABLE_NAME
 * the table in it (default chat-relay): one runtime per table, as one per data folder. The browser
 * tests run their instances so, on the run's one DynamoDB Local (test/e2e/support/relay.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { lockDataDir } from './data-lock.js';
import { LOCAL_AWS_ENV, launchDynamo, runningDynamo } from './dynamo.js';
import type { LocalDynamo } from './dynamo.js';
import type { WebApp } from './web-app.js';
import { prepareWebApp } from './web-build.js';

export const LOCAL_TABLE_NAME = 'chat-relay';

/** When `npm start`'s launcher started (epoch ms, local/main.ts sets it), else this process. */
const STARTED_AT = Number(process.env.CHAT_RELAY_STARTED_AT) || performance.timeOrigin;
const since = (from = STARTED_AT) => Math.round(Date.now() - from);
const progress = (line: string) => console.log(`[${String(since()).padStart(5)} ms] ${line}`);

function readConfigFile(path: string | undefined): string {
  if (!path) return '{}';
  const full = resolve(path);
  if (!existsSync(full)) throw new Error(`CONFIG_PATH ${full} does not exist.`);
  const text = readFileSync(full, 'utf8');
  try {
    JSON.parse(text);
  } catch (error) {
    throw new Error(`CONFIG_PATH ${full} is not valid JSON: ${(error as Error).message}`);
  }
  return text;
}

async function main(): Promise<void> {
  let dynamo: (Omit<LocalDynamo, 'process'> & { process?: LocalDynamo['process'] }) | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await dynamo?.stop().catch(() => undefined);
    process.exit(code);
  };
  // `on`, not `once`: Ctrl-C reaches this process twice (from the terminal and from the launcher).
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  // The launcher went away (killed, or its terminal closed): stop too.
  process.once('disconnect', () => void stop(0));
  process.once('exit', () => dynamo?.process?.kill('SIGKILL'));

  try {
    const port = Number(process.env.PORT ?? 3000);
    if (!Number.isInteger(port) || port < 0 || port > 65_535)
      throw new Error(`PORT must be an integer from 0 to 65535, not "${process.env.PORT}".`);
    const dataDir = resolve(process.env.DATA_DIR ?? '.data');
    const rawConfig = readConfigFile(process.env.CONFIG_PATH);
    // Before anything touches the folder: a second runtime on it would run a second DynamoDB Local
    // over the same files (local/data-lock.ts). Released when this process exits.
    lockDataDir(dataDir);

    // The JVM first: everything below overlaps its start.
    const launchedAt = Date.now();
    const running = process.env.DYNAMODB_ENDPOINT;
    const launched = running ? runningDynamo(running) : await launchDynamo({ dataDir: join(dataDir, 'dynamodb') });
    dynamo = launched;
    const tableName = process.env.TABLE_NAME || LOCAL_TABLE_NAME;
    Object.assign(process.env, LOCAL_AWS_ENV, {
      TABLE_NAME: tableName,
      DYNAMODB_ENDPOINT: launched.endpoint,
      INSTANCE_CONFIG: rawConfig,
    });
    if (process.env.RELAY_REHEARSE === '1') {
      // The rehearsal of the deployment (local/rehearse/start.ts): the synthesized assembly, not the sources.
      const { startRehearsedRuntime } = await import('./rehearse/start.js');
      const rehearsal = await startRehearsedRuntime({
        port,
        dataDir,
        dynamoEndpoint: launched.endpoint,
        tableName,
        ready: launched.ready,
        progress,
      });
      const previous = dynamo;
      dynamo = { ...previous, stop: async () => (await rehearsal.stop(), await previous.stop()) };
      progress('ready');
      return;
    }
    const tableModule = import('./table.js');
    const tableReady = launched.ready.then(async () => {
      progress(`DynamoDB Local up (${running ? `running at ${running}` : `${since(launchedAt)} ms after launch`})`);
      const created = await (await tableModule).ensureTable(launched.endpoint, tableName);
      progress(`table ${tableName} ${created ? 'created' : 'found'}`);
      return created;
    });
    // Observed here so an early failure (Java missing) is not an unhandled rejection while
    // the handlers load; startLocalApi awaits and reports it.
    tableReady.catch(() => undefined);
    // The web app's build check (and build, if stale) overlaps the JVM's start too.
    const web = prepareWebApp(process.env.RELAY_WEB_DIR, progress).catch((error: unknown): WebApp => ({
      dir: '',
      unavailable: `The web app could not be prepared: ${(error as Error).message}`,
    }));

    // Fail fast on a configuration the handlers would refuse.
    // The VAPID key pair first: with push enabled, the configuration is valid only with one (§12.3).
    const [{ resolveConfig }, { ensureVapidKeys }] = await Promise.all([
      import('../functions/platform/instance-config.js'),
      import('./vapid.js'),
    ]);
    const vapidKeysFile = join(dataDir, 'vapid-keys.json');
    const config = resolveConfig(JSON.parse(rawConfig), {
      ...process.env,
      VAPID_PUBLIC_KEY: ensureVapidKeys(vapidKeysFile),
    });

    const { startLocalApi } = await import('./server.js');
    let api;
    try {
      api = await startLocalApi(port, {
        sqsDataDir: join(dataDir, 'sqs'),
        s3DataDir: join(dataDir, 's3'),
        searchCacheDir: join(dataDir, 'search-cache'),
        vapidKeysFile,
        tableReady,
        // Every event number handed out so far was handed out by a runtime that is gone (this one
        // holds the folder's lock): one that holds no event is a hole a crash left, which readers
        // void at once instead of waiting out their grace (issue 33 item 21;
        // functions/core/event-stream.ts). Through the handlers' own module, so only once the
        // local API has set their environment (a table that answered first, as a DynamoDB Local
        // already running does, had this read it unset, and the start failed).
        afterTable: async () => {
          if (!(await tableReady)) await (await import('../functions/store/events-repo.js')).settleHandedOut();
        },
        web,
        onProgress: (step) => progress(step === 'emulators' ? 'SQS and S3 emulators up' : 'handlers loaded'),
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new Error(`Port ${port} on 127.0.0.1 is already in use: stop the other server or set PORT.`);
      }
      throw error;
    }
    const secret = config.security.instanceSecretEnabled
      ? 'required for writes (Authorization: Bearer <secret>)'
      : 'disabled';
    progress('ready');
    console.log(`chat relay listening on ${api.url}/api/v1  (data: ${dataDir}, instance secret: ${secret})`);
    const served = await web;
    console.log(`web app on ${api.url}/  (${served.unavailable ? 'unavailable: see above' : served.dir})`);
  } catch (error) {
    console.error(`npm start failed: ${(error as Error).message}`);
    await stop(1);
  }
}

void main();
