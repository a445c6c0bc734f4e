/**
 * The S3 client (one per container) of the media bucket and the search index bucket. Locally
 * S3_ENDPOINT points at the emulator (path-style addressing); in AWS it is unset.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3_BUDGET, clientBudget } from './aws-clients.js';
import { env } from './env.js';

let client: S3Client | undefined;

export function s3(): S3Client {
  const endpoint = env().S3_ENDPOINT;
  // Timeouts and attempts that end inside every route's timeout (aws-clients.ts).
  client ??= new S3Client({ endpoint, forcePathStyle: endpoint !== undefined, ...clientBudget(S3_BUDGET) });
  return client;
}
