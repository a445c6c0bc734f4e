/**
 * `RELAY_REHEARSE=1 npm start` (local/run.ts hands over here once DynamoDB Local is launched):
 * synthesizes the app as `npx cdk synth` does, into cdk.out, with the same CONFIG_PATH (bin/app.ts
 * reads it), unless RELAY_REHEARSE_ASSEMBLY names an assembly already made; then serves it on
 * PORT (local/rehearse/rehearsal.ts) and prints the lines `npm start` prints: the base URL, and
 * the instance secret the deploy-time custom resource made in the table (as the stack's
 * InstanceSecretCommand output reads it on AWS).
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Keys } from '../../functions/store/keys.js';
import { startRehearsal } from './rehearsal.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export async function startRehearsedRuntime(options: {
  port: number;
  dataDir: string;
  dynamoEndpoint: string;
  tableName: string;
  ready: Promise<unknown>;
  progress: (line: string) => void;
}): Promise<{ stop: () => Promise<void> }> {
  let assemblyDir = process.env.RELAY_REHEARSE_ASSEMBLY ? resolve(process.env.RELAY_REHEARSE_ASSEMBLY) : '';
  if (!assemblyDir) {
    assemblyDir = join(ROOT, 'cdk.out');
    options.progress('synthesizing the app into cdk.out (npx cdk synth)');
    const synth = spawnSync(join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', assemblyDir], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    if (synth.status !== 0) throw new Error(`cdk synth failed:\n${synth.stdout}${synth.stderr}`);
  }
  await options.ready;
  options.progress(`serving the assembly in ${assemblyDir}`);
  const rehearsal = await startRehearsal({
    assemblyDir,
    dynamoEndpoint: options.dynamoEndpoint,
    tableName: options.tableName,
    port: options.port,
    s3DataDir: join(options.dataDir, 's3'),
    log: (line) => console.log(line),
  });
  const secret = await instanceSecret(options.dynamoEndpoint, options.tableName);
  console.log(
    `chat relay listening on ${rehearsal.url}/api/v1  (rehearsal of ${assemblyDir}, instance secret: ` +
      `${secret ? `${secret} (made by the deploy in the table)` : 'disabled'})`,
  );
  console.log(`web app on ${rehearsal.url}/  (the assembly's web bucket)`);
  return { stop: () => rehearsal.stop() };
}

async function instanceSecret(endpoint: string, tableName: string): Promise<string | undefined> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const key = Keys.generatedSecret('INSTANCE');
    const item = await client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: key.pk }, sk: { S: key.sk } }, ConsistentRead: true }),
    );
    return item.Item?.value?.S;
  } finally {
    client.destroy();
  }
}
