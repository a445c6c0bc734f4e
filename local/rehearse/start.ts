/**
 * `RELAY_REHEARSE=1 npm start` (local/run.ts hands over here once DynamoDB Local is launched):
 * synthesizes the app as `npx cdk synth` does, into cdk.out, with the same CONFIG_PATH (bin/app.ts
 * reads it), unless RELAY_REHEARSE_ASSEMBLY names an assembly already made; then serves it on
 * PORT (local/rehearse/rehearsal.ts) and prints the lines `npm start` prints: the base URL, and
 * the instance secret the deploy-time custom resource made in the table (as the stack's
 * InstanceSecretCommand output reads it on AWS).
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { GetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Keys } from '../../functions/store/keys.js';
import { projectRoot } from '../web-build.js';
import { startRehearsal } from './rehearsal.js';

// The project's own folder, also when this module runs from npm start's precompiled copy under
// node_modules/.cache/ (there, '../../' is inside the cache, with no cdk.out and no .bin/cdk).
const ROOT = projectRoot();

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
    // Asynchronously: DynamoDB Local starts meanwhile, and its readiness probe needs the event loop.
    await synthesize(assemblyDir);
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

/** `cdk synth` of the project into `outdir`; rejects with its output when it fails. */
function synthesize(outdir: string): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '-o', outdir], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (error) => fail(new Error(`cdk synth could not run: ${error.message}`)));
    child.once('close', (code) => (code === 0 ? ok() : fail(new Error(`cdk synth failed:\n${output}`))));
  });
}
