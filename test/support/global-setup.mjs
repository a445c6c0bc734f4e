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
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The OpenAPI document the sources publish (GET /api/v1/doc generates the same one), written once
 * for the run by lib/openapi/write.ts in a child process, as the synth writes it: every answer of
 * the suite is checked against it (openapi-check.ts), and each file reads it instead of loading
 * every handler module to generate it again (measured: about 0.45 s a file).
 */
function writeDocument(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'lib/openapi/write.ts', file], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let errors = '';
    child.stderr.on('data', (d) => (errors += d));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`lib/openapi/write.ts failed (exit ${code}):\n${errors}`)),
    );
  });
}

export default async function globalSetup() {
  const documentDir = mkdtempSync(join(tmpdir(), 'chat-relay-openapi-'));
  const documentFile = join(documentDir, 'openapi.json');
  const written = writeDocument(documentFile);
  const { startDynamo } = await tsImport('../../local/dynamo.ts', import.meta.url);
  const dynamo = await startDynamo();
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  await written.catch((error) => {
    dynamo.process.kill('SIGKILL');
    throw error;
  });
  process.env.TEST_OPENAPI_DOCUMENT = documentFile;
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
    rmSync(documentDir, { recursive: true, force: true });
  });
  // Killed by a signal, Node exits without 'exit': stop the child first, then die of the signal as before.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      dynamo.process.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
}
