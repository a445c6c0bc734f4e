/**
 * The local S3 (fauxqs behind local/s3.ts's front, as `npm start` runs it, with its data
 * under DATA_DIR/s3) keeps what media relies on: objects with their stored headers across a
 * restart, byte ranges (206, 416), and presigned POST — its policy checked as S3 checks it,
 * and files beyond fauxqs's own 11 MiB body limit stored in parts. Where it differs from S3:
 * it ignores response-header overrides on a presigned GET (objects are stored with their own
 * Content-Disposition, which both honour).
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_S3_CREDENTIALS, startLocalS3 } from '../../../local/s3.js';

const dir = mkdtempSync(join(tmpdir(), 'local-s3-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const clientOf = (endpoint: string) =>
  new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { ...LOCAL_S3_CREDENTIALS },
  });

describe('local S3 (fauxqs) with a data folder', () => {
  it('keeps objects and their headers across a restart, and serves ranges', async () => {
    let local = await startLocalS3(dir);
    let s3 = clientOf(local.endpoint);
    await s3.send(
      new PutObjectCommand({
        Bucket: local.bucket,
        Key: 'uploads/c/m.pdf',
        Body: Buffer.from('0123456789'),
        ContentType: 'application/pdf',
        ContentDisposition: 'inline; filename="m.pdf"',
        CacheControl: 'private, max-age=86400',
      }),
    );
    s3.destroy();
    await local.stop();

    local = await startLocalS3(dir);
    s3 = clientOf(local.endpoint);
    try {
      const whole = await s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'uploads/c/m.pdf' }));
      expect([
        await whole.Body!.transformToString(),
        whole.ContentType,
        whole.ContentDisposition,
        whole.CacheControl,
      ]).toEqual(['0123456789', 'application/pdf', 'inline; filename="m.pdf"', 'private, max-age=86400']);
      const part = await s3.send(
        new GetObjectCommand({ Bucket: local.bucket, Key: 'uploads/c/m.pdf', Range: 'bytes=2-4' }),
      );
      expect([await part.Body!.transformToString(), part.ContentRange]).toEqual(['234', 'bytes 2-4/10']);
      await expect(
        s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'uploads/c/m.pdf', Range: 'bytes=10-' })),
      ).rejects.toMatchObject({ $metadata: { httpStatusCode: 416 } });
      await expect(
        s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'uploads/c/none' })),
      ).rejects.toMatchObject({ name: 'NoSuchKey' });

      // A presigned POST stores the form's file with the form's Content-Type.
      const post = await createPresignedPost(s3, {
        Bucket: local.bucket,
        Key: 'pending/c/u',
        Conditions: [['content-length-range', 3, 3]],
        Fields: { 'Content-Type': 'text/plain' },
        Expires: 60,
      });
      const form = new FormData();
      for (const [k, v] of Object.entries(post.fields)) form.append(k, v);
      form.append('file', new Blob(['abc']), 'f');
      expect((await fetch(post.url, { method: 'POST', body: form })).status).toBeLessThan(300);
      const posted = await s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'pending/c/u' }));
      expect([await posted.Body!.transformToString(), posted.ContentType]).toEqual(['abc', 'text/plain']);

      // The policy: size range, Content-Type, key, expiry.
      const tryPost = async (
        p: { url: string; fields: Record<string, string> },
        bytes: Buffer,
        override: Record<string, string> = {},
      ) => {
        const f = new FormData();
        for (const [k, v] of Object.entries({ ...p.fields, ...override })) f.append(k, v);
        f.append('file', new Blob([bytes]), 'f');
        const res = await fetch(p.url, { method: 'POST', body: f });
        return [res.status, /<Code>(\w+)<\/Code>/.exec(await res.text())?.[1] ?? ''];
      };
      const strict = await createPresignedPost(s3, {
        Bucket: local.bucket,
        Key: 'pending/c/strict',
        Conditions: [
          ['content-length-range', 20 * 1024 * 1024, 20 * 1024 * 1024],
          ['eq', '$Content-Type', 'application/pdf'],
        ],
        Fields: { 'Content-Type': 'application/pdf' },
        Expires: 60,
      });
      const big = Buffer.alloc(20 * 1024 * 1024, 3);
      expect(await tryPost(strict, big.subarray(1))).toEqual([400, 'EntityTooSmall']);
      expect(await tryPost(strict, Buffer.concat([big, Buffer.from('x')]))).toEqual([400, 'EntityTooLarge']);
      expect(await tryPost(strict, big, { 'Content-Type': 'text/html' })).toEqual([403, 'AccessDenied']);
      expect(await tryPost(strict, big, { key: 'uploads/elsewhere' })).toEqual([403, 'AccessDenied']);
      // 20 MB is beyond fauxqs's 11 MiB body limit: the front stores it in parts, type kept.
      expect(await tryPost(strict, big)).toEqual([204, '']);
      const stored = await s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'pending/c/strict' }));
      expect([
        stored.ContentLength,
        stored.ContentType,
        Buffer.from(await stored.Body!.transformToByteArray()).equals(big),
      ]).toEqual([big.length, 'application/pdf', true]);
      const expired = await createPresignedPost(s3, { Bucket: local.bucket, Key: 'pending/c/late', Expires: -10 });
      expect(await tryPost(expired, Buffer.from('x'))).toEqual([403, 'AccessDenied']);
    } finally {
      s3.destroy();
      await local.stop();
    }
  });
});
