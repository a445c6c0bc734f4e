/**
 * The media bucket (contract §2.4, §8.3): originals and thumbnails as S3 objects, keyed as
 * the contract's storage paths. The table holds the media records; the bucket only the bytes.
 *
 * Configuration: MEDIA_BUCKET, and S3_ENDPOINT for the local emulator (path-style addressing).
 * Read on each use, like the queues, because the local runtime starts its emulator after the
 * process environment was first read.
 */
import { DeleteObjectsCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';

let client: { endpoint: string | undefined; s3: S3Client } | undefined;

function s3(): S3Client {
  const endpoint = process.env.S3_ENDPOINT || undefined;
  if (!client || client.endpoint !== endpoint) {
    client = { endpoint, s3: new S3Client({ endpoint, forcePathStyle: endpoint !== undefined, maxAttempts: 4 }) };
  }
  return client.s3;
}

function bucket(): string {
  const name = process.env.MEDIA_BUCKET;
  if (!name) throw new Error('MEDIA_BUCKET is not configured');
  return name;
}

export async function putObject(key: string, bytes: Uint8Array, contentType: string): Promise<void> {
  await s3().send(new PutObjectCommand({ Bucket: bucket(), Key: key, Body: bytes, ContentType: contentType, ContentLength: bytes.byteLength }));
}

export interface StoredBytes {
  bytes: Buffer;
  /** Size of the whole object (a range read returns part of it). */
  size: number;
}

/** Reads an object, or the inclusive byte range [start, end] of it; undefined when it does not exist. */
export async function getObject(key: string, range?: { start: number; end: number }): Promise<StoredBytes | undefined> {
  try {
    const out = await s3().send(new GetObjectCommand({ Bucket: bucket(), Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
    const bytes = Buffer.from(await out.Body!.transformToByteArray());
    const total = /\/(\d+)$/.exec(out.ContentRange ?? '')?.[1];
    return { bytes, size: total !== undefined ? Number(total) : bytes.length };
  } catch (error) {
    if (error instanceof NoSuchKey || (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404)) return undefined;
    throw error;
  }
}

/** Deletes objects; a missing one is not an error. */
export async function deleteObjects(keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await s3().send(new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }));
}
