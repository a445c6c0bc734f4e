/**
 * The in-process local runtime the benchmarks drive (run.ts, contention.ts, keyed-writes.ts):
 * the environment the handlers read on their first load — the bench's table on DynamoDB Local,
 * silent logs, no write rate limit in the way, the usage headers on unless told otherwise — then
 * the runtime itself, imported only after that (handlers read the environment once).
 */
import { LOCAL_AWS_ENV } from '../../local/dynamo.js';
import type { LocalApi, LocalApiOptions } from '../../local/server.js';
import { BENCH_CONFIG } from './scenario.js';

export interface BenchApiOptions {
  /** The instance configuration. @default BENCH_CONFIG */
  config?: unknown;
  /** x-ddb-* / x-storage-* / x-server-ms / x-cpu-ms on every response. @default true */
  usageHeaders?: boolean;
  /** The runtime's own options (which background parts run). */
  local?: LocalApiOptions;
}

export async function startBenchApi(
  dynamoEndpoint: string,
  tableName: string,
  { config = BENCH_CONFIG, usageHeaders = true, local = {} }: BenchApiOptions = {},
): Promise<LocalApi> {
  Object.assign(process.env, LOCAL_AWS_ENV, {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: dynamoEndpoint,
    INSTANCE_CONFIG: JSON.stringify(config),
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    OPENGRAM_WRITE_RATE_LIMIT_MAX: '1000000000',
    ...(usageHeaders ? { EXPOSE_USAGE_HEADERS: '1' } : {}),
  });
  const { startLocalApi } = await import('../../local/server.js');
  return startLocalApi(0, local);
}
