/**
 * The S3 client (one per container) of the media bucket and the search index bucket. Locally
 * S3_ENDPOINT points at the emulator (path-style addressing); in AWS it is unset.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { env } from './env.js';

let client: S3Client | undefined;

export function s3(): S3Client {
  const endpoint = env().S3_ENDPOINT;
  client ??= new S3Client({ endpoint, forcePathStyle: endpoint !== undefined, maxAttempts: 4 });
  return client;
}
