/**
 * Starts one in-memory DynamoDB Local and one S3 emulator (fauxqs, keeping its objects in a
 * temporary folder as npm start keeps them in its data folder) for the whole test run, and hands
 * their endpoints to the workers through the environment: each file's local API puts its own S3
 * front, with buckets of its own, before the shared emulator (local/s3.ts `shared`), instead of
 * loading and starting an emulator per file (about 0.8 s of CPU each under jest). Plain ESM, loading the TypeScript local runtime through
 * tsx, because jest's globalSetup runs outside its module system. The child is killed in
 * global-teardown, and also if this process exits any other way (a signal included), so no Java
 * process is left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startDynamo } = await tsImport('../../local/dynamo.ts', import.meta.url);
  const dynamo = await startDynamo();
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  const { startFauxqsOnLoopback } = await tsImport('../../local/fauxqs.ts', import.meta.url);
  const s3Dir = mkdtempSync(join(tmpdir(), 'chat-relay-test-s3-'));
  const s3 = await startFauxqsOnLoopback({ port: 0, logger: false, s3StorageDir: s3Dir });
  process.env.TEST_S3_ENDPOINT = `http://127.0.0.1:${s3.port}`;
  globalThis.__s3__ = { stop: () => s3.stop(), dir: s3Dir };
  // Handler logs stay quiet in every worker, also for modules a test imports before startApi
  // (TEST_LOG_LEVEL=INFO shows them).
  process.env.POWERTOOLS_LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'SILENT';
  globalThis.__dynamo__ = dynamo;
  process.once('exit', () => {
    dynamo.process.kill('SIGKILL');
    rmSync(s3Dir, { recursive: true, force: true });
  });
  // Killed by a signal, Node exits without 'exit': stop the child first, then die of the signal as before.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      dynamo.process.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
}
