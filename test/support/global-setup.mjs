/**
 * Starts one in-memory DynamoDB Local for the whole test run and hands its endpoint to the
 * workers through the environment. Plain ESM, loading the TypeScript local runtime through
 * tsx, because jest's globalSetup runs outside its module system. The child is killed in
 * global-teardown, and also if this process exits any other way (a signal included), so no Java
 * process is left.
 */
import { tsImport } from 'tsx/esm/api';

export default async function globalSetup() {
  const { startDynamo } = await tsImport('../../local/dynamo.ts', import.meta.url);
  const dynamo = await startDynamo();
  process.env.TEST_DYNAMODB_ENDPOINT = dynamo.endpoint;
  // Handler logs stay quiet in every worker, also for modules a test imports before startApi
  // (TEST_LOG_LEVEL=INFO shows them).
  process.env.POWERTOOLS_LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'SILENT';
  globalThis.__dynamo__ = dynamo;
  process.once('exit', () => dynamo.process.kill('SIGKILL'));
  // Killed by a signal, Node exits without 'exit': stop the child first, then die of the signal as before.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(signal, () => {
      dynamo.process.kill('SIGKILL');
      process.kill(process.pid, signal);
    });
  }
}
