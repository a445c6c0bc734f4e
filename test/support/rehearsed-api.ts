/**
 * A test file's API on the rehearsal of the deployment (local/rehearse/): the synthesized cloud
 * assembly that the rehearsal project's global setup made (REHEARSAL_ASSEMBLY), each function
 * from its bundle with its template environment and IAM enforced, behind the distribution.
 * startApi (api.ts) hands over to it when that variable is set, so the same test files run on
 * the sources and on the assembly.
 *
 * What a test file gives that is not in the template is a deployment input: its configuration
 * document (INSTANCE_CONFIG) and its environment knobs (§12.2 overrides, shortened windows).
 * The in-process switches of the source runtime (dispatch, stream timers, search, auto-rename)
 * do not apply: the assembly's mappings, schedules and state machine all run, as on AWS.
 * The file's table is deleted when it closes (DynamoDB Local's streams slow every later table).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { reloadEnvForTests } from '../../functions/platform/env.js';
import { LOCAL_AWS_ENV } from '../../local/dynamo.js';
import type { Rehearsal } from '../../local/rehearse/rehearsal.js';
import type { StartOptions, TestApi } from './api.js';

export async function startRehearsedApi(
  options: StartOptions,
  endpoint: string,
  assemblyDir: string,
  request: (url: string) => TestApi['request'],
): Promise<TestApi & { rehearsal: Rehearsal }> {
  if (options.functionTimeoutSeconds)
    throw new Error(
      "functionTimeoutSeconds is the local runtime's (local/server.ts): the rehearsal runs the assembly's timeouts",
    );
  const tableName = `rehearsal-${randomUUID()}`;
  const inputs: Record<string, string> = {
    INSTANCE_CONFIG: JSON.stringify(options.config ?? {}),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'SILENT',
    OPENGRAM_WRITE_RATE_LIMIT_MAX: '1000000',
    ...options.env,
  };
  // The test's own reads go straight to the table, as an operator's would.
  Object.assign(process.env, LOCAL_AWS_ENV, { TABLE_NAME: tableName, DYNAMODB_ENDPOINT: endpoint, ...inputs });
  reloadEnvForTests();
  const { startRehearsal } = await import('../../local/rehearse/rehearsal.js');
  const rehearsal = await startRehearsal({
    assemblyDir,
    dynamoEndpoint: endpoint,
    tableName,
    port: 0,
    inputs,
    log: () => undefined,
    functionOutput: process.env.TEST_LOG_LEVEL ? 'inherit' : 'discard',
  });
  // The buckets, for tests that look into them as an operator would (media/support.ts).
  Object.assign(process.env, {
    S3_ENDPOINT: rehearsal.s3.endpoint,
    MEDIA_BUCKET: rehearsal.s3.mediaBucket,
    SEARCH_BUCKET: rehearsal.s3.searchBucket,
  });
  reloadEnvForTests();
  const setEnv = (vars: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(vars)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    reloadEnvForTests();
    rehearsal.host.setInputs(vars);
  };
  const send = request(rehearsal.url);
  return {
    url: rehearsal.url,
    tableName,
    rehearsal,
    request: send,
    get: (path, opts) => send('GET', path, undefined, opts),
    post: (path, body, opts) => send('POST', path, body, opts),
    patch: (path, body, opts) => send('PATCH', path, body, opts),
    setConfig: (config) => setEnv({ INSTANCE_CONFIG: JSON.stringify(config) }),
    setEnv,
    close: async () => {
      await rehearsal.stop();
      recordInvocations(rehearsal);
      const denied = rehearsal.denials();
      const client = new DynamoDBClient({ ...LOCAL_AWS_ENV_CLIENT, endpoint });
      await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
      client.destroy();
      // A denial is a missing grant in the stack: it fails the file even when its tests passed.
      if (denied.length > 0)
        throw new Error(`IAM denied ${denied.length} calls:\n${denied.map((d) => `  ${d.message}`).join('\n')}`);
    },
  };
}

/** Adds the functions a rehearsal ran to the run's ledger (rehearsal-teardown.mjs checks it covers them all). */
export function recordInvocations(rehearsal: Rehearsal): void {
  const ledger = process.env.REHEARSAL_INVOKED_FILE;
  if (ledger) appendFileSync(ledger, [...rehearsal.host.invocations.keys()].map((k) => `${k}\n`).join(''));
}

const LOCAL_AWS_ENV_CLIENT = {
  region: LOCAL_AWS_ENV.AWS_REGION,
  credentials: { accessKeyId: LOCAL_AWS_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: LOCAL_AWS_ENV.AWS_SECRET_ACCESS_KEY },
};
