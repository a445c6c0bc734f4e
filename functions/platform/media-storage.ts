/**
 * The media bucket (contract §2.4, §8.3): originals and thumbnails as S3 objects, keyed as
 * the contract's storage paths. The table holds the media records; the bucket only the bytes.
 *
 * Configuration (platform/env.ts): MEDIA_BUCKET, and S3_ENDPOINT for the local emulator
 * (path-style addressing; the local runtime starts it before it mounts the handlers).
 *
 * The two presigners are imported on first use (each its own chunk in the bundles): most of
 * the functions that share this module never presign.
 */
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  NoSuchKey,
  NotFound,
  PutObjectCommand,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { requiredEnv } from './env.js';
import { s3 } from './s3-client.js';

const bucket = (): string => requiredEnv('MEDIA_BUCKET');

/** The headers a stored object answers with (kept on the object, so a presigned GET serves them too). */
export interface ObjectHeaders {
  contentType: string;
  contentDisposition?: string | undefined;
  cacheControl?: string | undefined;
}

/** S3's answer for a key that does not exist (GetObject: NoSuchKey, HeadObject: NotFound). */
export const isMissing = (error: unknown): boolean =>
  error instanceof NoSuchKey ||
  error instanceof NotFound ||
  (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404);

export async function putObject(key: string, bytes: Uint8Array, headers: ObjectHeaders): Promise<void> {
  await s3().send(
    new PutObjectCommand({
      Bucket: bucket(),
      Key: key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: headers.contentType,
      ContentDisposition: headers.contentDisposition,
      CacheControl: headers.cacheControl,
    }),
  );
}

export interface StoredBytes {
  bytes: Buffer;
  /** Size of the whole object (a range read returns part of it). */
  size: number;
}

/** Reads an object, or the inclusive byte range [start, end] of it; undefined when it does not exist. */
export async function getObject(key: string, range?: { start: number; end: number }): Promise<StoredBytes | undefined> {
  try {
    const out = await s3().send(
      new GetObjectCommand({
        Bucket: bucket(),
        Key: key,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    const bytes = Buffer.from(await out.Body!.transformToByteArray());
    const total = /\/(\d+)$/.exec(out.ContentRange ?? '')?.[1];
    return { bytes, size: total !== undefined ? Number(total) : bytes.length };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Deletes objects; a missing one is not an error. */
export async function deleteObjects(keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  await s3().send(
    new DeleteObjectsCommand({ Bucket: bucket(), Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
  );
}

/** A stored object's size and type, or undefined when it does not exist. */
export async function headObject(key: string): Promise<{ size: number; contentType: string | undefined } | undefined> {
  try {
    const out = await s3().send(new HeadObjectCommand({ Bucket: bucket(), Key: key }));
    return { size: out.ContentLength ?? 0, contentType: out.ContentType };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/** Copies an object within the bucket with new headers (a finalized upload moves to its storage path). */
export async function copyObject(from: string, to: string, headers: ObjectHeaders): Promise<void> {
  await s3().send(
    new CopyObjectCommand({
      Bucket: bucket(),
      Key: to,
      CopySource: `${bucket()}/${encodeURIComponent(from).replace(/%2F/g, '/')}`,
      MetadataDirective: 'REPLACE',
      ContentType: headers.contentType,
      ContentDisposition: headers.contentDisposition,
      CacheControl: headers.cacheControl,
    }),
  );
}

/**
 * A presigned POST for one object: exactly `bytes` long, of exactly `contentType`, at `key`,
 * valid for `expiresSeconds`. The client sends `fields` then the file as a multipart form.
 */
export async function presignUpload(
  key: string,
  contentType: string,
  bytes: number,
  expiresSeconds: number,
): Promise<{ url: string; fields: Record<string, string> }> {
  const { createPresignedPost } = await import('@aws-sdk/s3-presigned-post');
  return createPresignedPost(s3(), {
    Bucket: bucket(),
    Key: key,
    Conditions: [
      ['content-length-range', bytes, bytes],
      ['eq', '$Content-Type', contentType],
    ],
    Fields: { 'Content-Type': contentType },
    Expires: expiresSeconds,
  });
}

/** A presigned GET whose response carries these headers (S3 response-header overrides). */
export async function presignDownload(
  key: string,
  headers: Required<ObjectHeaders>,
  expiresSeconds: number,
): Promise<string> {
  const { getSignedUrl } = await import('@aws-sdk/s3-request-presigner');
  return getSignedUrl(
    s3(),
    new GetObjectCommand({
      Bucket: bucket(),
      Key: key,
      ResponseContentType: headers.contentType,
      ResponseContentDisposition: headers.contentDisposition,
      ResponseCacheControl: headers.cacheControl,
    }),
    { expiresIn: expiresSeconds },
  );
}
