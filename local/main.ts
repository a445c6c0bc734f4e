/**
 * `npm start`: the whole service on one machine. Boots DynamoDB Local and the SQS emulator
 * (both keep their data under DATA_DIR between runs), creates the table and queues as the
 * stack does, and serves every route on 127.0.0.1:PORT with the same handlers Lambda runs.
 *
 * Environment: PORT (3000), CONFIG_PATH (a JSON file shaped like the contract's §12
 * configuration), DATA_DIR (./.data), and the §12.2 OPENGRAM_* overrides.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveConfig } from '../functions/platform/instance-config.js';
import { LOCAL_AWS_ENV, startDynamo } from './dynamo.js';
import type { LocalDynamo } from './dynamo.js';
import { startLocalApi } from './server.js';
import { ensureTable } from './table.js';
import { ensureVapidKeys } from './vapid.js';

export const LOCAL_TABLE_NAME = 'chat-relay';

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
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`PORT must be an integer from 0 to 65535, not "${process.env.PORT}".`);
  const dataDir = resolve(process.env.DATA_DIR ?? '.data');
  const rawConfig = readConfigFile(process.env.CONFIG_PATH);
  // Fail fast on a configuration the handlers would refuse.
  // The VAPID key pair first: with push enabled, the configuration is valid only with one (§12.3).
  const vapidKeysFile = join(dataDir, 'vapid-keys.json');
  const config = resolveConfig(JSON.parse(rawConfig), {
    ...process.env,
    VAPID_PUBLIC_KEY: ensureVapidKeys(vapidKeysFile),
  });

  let dynamo: LocalDynamo | undefined;
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await dynamo?.stop().catch(() => undefined);
    process.exit(code);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(0));
  process.once('exit', () => dynamo?.process.kill('SIGKILL'));

  try {
    dynamo = await startDynamo({ dataDir: join(dataDir, 'dynamodb') });
    Object.assign(process.env, LOCAL_AWS_ENV, {
      TABLE_NAME: LOCAL_TABLE_NAME,
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      INSTANCE_CONFIG: rawConfig,
    });
    await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
    let api;
    try {
      api = await startLocalApi(port, {
        sqsDataDir: join(dataDir, 'sqs'),
        s3DataDir: join(dataDir, 's3'),
        searchCacheDir: join(dataDir, 'search-cache'),
        vapidKeysFile,
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
    console.log(`chat relay listening on ${api.url}/api/v1  (data: ${dataDir}, instance secret: ${secret})`);
  } catch (error) {
    console.error(`npm start failed: ${(error as Error).message}`);
    await stop(1);
  }
}

void main();
