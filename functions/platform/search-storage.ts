/**
 * Where the search index's segment files live (functions/core/search.ts): objects in the search
 * bucket, written once and never changed, and a local copy of each in a cache folder, fetched
 * on first use and kept while the segment is part of the index (Lambda's /tmp, which lasts as
 * long as the container; locally a folder under DATA_DIR).
 *
 * Configuration (platform/env.ts): SEARCH_BUCKET, SEARCH_CACHE_DIR, and S3_ENDPOINT locally.
 */
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { env, requiredEnv } from './env.js';
import { newId } from './ids.js';
import { isMissing } from './media-storage.js';
import { s3 } from './s3-client.js';

const bucket = (): string => requiredEnv('SEARCH_BUCKET');
const SEGMENT_PREFIX = 'segments/';
const SUFFIX = '.sqlite';
const SEGMENT_TYPE = 'application/vnd.sqlite3';

export function cacheDir(): string {
  const dir = env().SEARCH_CACHE_DIR ?? join(tmpdir(), 'search-index');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A key for a new segment object; its time prefix keeps listings in write order. */
export const newSegmentKey = (): string => `${SEGMENT_PREFIX}${Date.now().toString(36)}-${newId()}${SUFFIX}`;

/** The local copy's path of a segment object (whether or not it is there yet). */
export const cachedPath = (key: string): string => join(cacheDir(), key.slice(SEGMENT_PREFIX.length));

/** A path in the cache folder for a file being built (not a segment until published). */
export const scratchPath = (): string => join(cacheDir(), `build-${newId()}.tmp`);

/** Files above this go up in parts of this size (faster, and the local emulator takes at most 11 MiB a request). */
const PART_BYTES = 8 * 1024 * 1024;

/** Publishes a built file as segment `key`: uploaded, then kept as that key's local copy. */
export async function publishSegment(builtPath: string, key: string): Promise<number> {
  const bytes = readFileSync(builtPath);
  const common = { Bucket: bucket(), Key: key };
  if (bytes.byteLength <= PART_BYTES) {
    await s3().send(
      new PutObjectCommand({ ...common, Body: bytes, ContentLength: bytes.byteLength, ContentType: SEGMENT_TYPE }),
    );
  } else {
    const { UploadId } = await s3().send(new CreateMultipartUploadCommand({ ...common, ContentType: SEGMENT_TYPE }));
    const parts: { ETag: string | undefined; PartNumber: number }[] = [];
    for (let offset = 0, n = 1; offset < bytes.byteLength; offset += PART_BYTES, n++) {
      const body = bytes.subarray(offset, offset + PART_BYTES);
      const out = await s3().send(
        new UploadPartCommand({ ...common, UploadId, PartNumber: n, Body: body, ContentLength: body.byteLength }),
      );
      parts.push({ ETag: out.ETag, PartNumber: n });
    }
    // An upload never completed is aborted by the bucket's lifecycle rule after a day.
    await s3().send(new CompleteMultipartUploadCommand({ ...common, UploadId, MultipartUpload: { Parts: parts } }));
  }
  renameSync(builtPath, cachedPath(key));
  return bytes.byteLength;
}

/** A segment the manifest listed is no longer in the bucket (replaced since the manifest was read). */
export class SegmentGoneError extends Error {
  constructor(readonly key: string) {
    super(`search segment ${key} is gone`);
  }
}

const downloads = new Map<string, Promise<string>>();

/** The local copy of segment `key`, fetched from the bucket the first time. */
export function localSegment(key: string): Promise<string> {
  const path = cachedPath(key);
  if (existsSync(path)) return Promise.resolve(path);
  let pending = downloads.get(key);
  if (!pending) {
    pending = (async () => {
      const out = await s3()
        .send(new GetObjectCommand({ Bucket: bucket(), Key: key }))
        .catch((error: unknown) => {
          throw isMissing(error) ? new SegmentGoneError(key) : error;
        });
      const partial = `${path}.${newId()}.part`;
      await pipeline(out.Body as Readable, createWriteStream(partial));
      renameSync(partial, path);
      return path;
    })().finally(() => downloads.delete(key));
    downloads.set(key, pending);
  }
  return pending;
}

/** Removes local copies (and leftover build files) of every segment not in `keep`. */
export function pruneCache(keep: Iterable<string>): void {
  const wanted = new Set([...keep].map((k) => cachedPath(k)));
  for (const name of readdirSync(cacheDir())) {
    const path = join(cacheDir(), name);
    if (name.endsWith(SUFFIX) && !wanted.has(path)) rmSync(path, { force: true });
  }
}

/** Deletes segment objects no longer in the index. */
export async function deleteSegments(keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    await s3().send(
      new DeleteObjectsCommand({
        Bucket: bucket(),
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
      }),
    );
  }
  for (const key of keys) rmSync(cachedPath(key), { force: true });
}
