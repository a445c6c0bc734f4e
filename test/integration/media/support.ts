/**
 * Shared helpers of the media tests: multipart uploads through fetch's own FormData encoding,
 * and direct looks into the media bucket of the local runtime (what a failed upload must not
 * leave behind; objects put around the upload policy).
 */
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { LOCAL_S3_CREDENTIALS } from '../../../local/s3.js';
import type { Response, TestApi } from '../../support/api.js';

/** A client on the running local bucket (the runtime sets S3_ENDPOINT and MEDIA_BUCKET). */
async function withBucket<T>(f: (s3: S3Client, bucket: string) => Promise<T>): Promise<T> {
  const s3 = new S3Client({
    endpoint: process.env.S3_ENDPOINT,
    forcePathStyle: true,
    region: 'us-east-1',
    // The local S3 takes the signatures of its process's secret only (local/s3.ts).
    credentials: { ...LOCAL_S3_CREDENTIALS },
  });
  try {
    return await f(s3, process.env.MEDIA_BUCKET!);
  } finally {
    s3.destroy();
  }
}

/** Every object key in the media bucket under `prefix`, sorted. */
export const storedKeys = (prefix = ''): Promise<string[]> =>
  withBucket(async (s3, Bucket) =>
    ((await s3.send(new ListObjectsV2Command({ Bucket, Prefix: prefix }))).Contents ?? []).map((o) => o.Key!).sort(),
  );

/** Puts an object straight into the bucket, around the POST policy (a client that did not use the form). */
export const putAround = (key: string, bytes: Buffer, contentType: string): Promise<void> =>
  withBucket(async (s3, Bucket) => {
    await s3.send(new PutObjectCommand({ Bucket, Key: key, Body: bytes, ContentType: contentType }));
  });

/** POST /chats/{chatId}/media as multipart/form-data: [name, text or file, file name?] parts. */
export async function uploadForm(
  api: TestApi,
  chatId: string,
  parts: [string, string | Blob, string?][],
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value, fileName] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, value, fileName);
  }
  const res = await fetch(`${api.url}/api/v1/chats/${chatId}/media`, { method: 'POST', body: form, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}
