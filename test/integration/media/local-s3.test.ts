/**
 * The local S3 (fauxqs behind local/s3.ts's front, as `npm start` runs it, with its data
 * under DATA_DIR/s3) keeps what media relies on: objects with their stored headers across a
 * restart, byte ranges (206, 416), and presigned POST — its policy checked as S3 checks it,
 * and files beyond fauxqs's own 11 MiB body limit stored in parts. Where it differs from S3:
 * it ignores response-header overrides on a presigned GET (objects are stored with their own
 * Content-Disposition, which both honour).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createPresignedPost } from '@aws-sdk/s3-presigned-post';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
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

/**
 * The front checks what S3 checks (issue 33 item 3): a form's signature and policy before its
 * file, the size range while the file streams (nothing buffered beyond a part, the connection
 * closed past the maximum), and the signature and expiry of every other request.
 */
describe('local S3 front: signatures and limits', () => {
  const KEY = 'uploads/c/kept.txt';
  let local: Awaited<ReturnType<typeof startLocalS3>>;
  let s3: S3Client;
  const stored = async (key = KEY) => {
    const out = await s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: key }));
    return [await out.Body!.transformToString(), out.ContentType];
  };
  const policyFor = (max: number, key = KEY, options: { Expires?: number } = {}) =>
    createPresignedPost(s3, {
      Bucket: local.bucket,
      Key: key,
      Conditions: [
        ['content-length-range', 1, max],
        ['eq', '$Content-Type', 'text/plain'],
      ],
      Fields: { 'Content-Type': 'text/plain' },
      Expires: options.Expires ?? 60,
    });
  const post = async (p: { url: string; fields: Record<string, string> }, body: string, extra = {}) => {
    const form = new FormData();
    for (const [k, v] of Object.entries({ ...p.fields, ...extra })) form.append(k, v);
    form.append('file', new Blob([body]), 'f');
    const res = await fetch(p.url, { method: 'POST', body: form });
    const text = await res.text();
    return [res.status, /<Code>(\w+)<\/Code>/.exec(text)?.[1] ?? '', res.headers.get('x-content-type-options')];
  };

  beforeAll(async () => {
    local = await startLocalS3();
    s3 = clientOf(local.endpoint);
    await s3.send(
      new PutObjectCommand({ Bucket: local.bucket, Key: KEY, Body: 'original', ContentType: 'text/plain' }),
    );
  });
  afterAll(async () => {
    s3.destroy();
    await local.stop();
  });

  it('refuses a forged or re-used signature, an expired policy and a field the policy does not name', async () => {
    const good = await policyFor(100);
    expect(await post({ ...good, fields: { ...good.fields, 'X-Amz-Signature': 'not-a-signature' } }, 'forged')).toEqual(
      [403, 'SignatureDoesNotMatch', 'nosniff'],
    );
    // A policy of another key, its signature kept: the signature covers the policy.
    const other = await policyFor(100, 'uploads/c/other.txt');
    const swapped = { ...good.fields, Policy: other.fields.Policy! };
    expect(await post({ ...good, fields: swapped }, 'swapped')).toEqual([403, 'SignatureDoesNotMatch', 'nosniff']);
    // Signed with another secret (what 'local'/'local' would sign).
    const outsider = new S3Client({
      endpoint: local.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const theirs = await createPresignedPost(outsider, { Bucket: local.bucket, Key: KEY, Expires: 60 });
    expect(await post(theirs, 'outsider')).toEqual([403, 'SignatureDoesNotMatch', 'nosniff']);
    await expect(outsider.send(new GetObjectCommand({ Bucket: local.bucket, Key: KEY }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 403 },
    });
    outsider.destroy();
    expect(await post(await policyFor(100, KEY, { Expires: -5 }), 'late')).toEqual([403, 'AccessDenied', 'nosniff']);
    expect(await post(good, 'extra', { 'x-amz-meta-evil': '1' })).toEqual([403, 'AccessDenied', 'nosniff']);
    expect(await stored()).toEqual(['original', 'text/plain']);
    // The genuine form still stores.
    expect(await post(good, 'replaced')).toEqual([204, '', 'nosniff']);
    expect(await stored()).toEqual(['replaced', 'text/plain']);
  });

  /** Sends `total` bytes of file after the form's fields: how many went out, and how it ended. */
  async function stream(
    p: { url: string; fields: Record<string, string> },
    total: number,
    withLength: boolean,
  ): Promise<{ sent: number; status: number | string }> {
    const boundary = 'bound4ry';
    const head = Buffer.from(
      Object.entries(p.fields)
        .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
        .join('') +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n` +
        'Content-Type: text/plain\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    const { request } = await import('node:http');
    return new Promise((resolve) => {
      const req = request(p.url, {
        method: 'POST',
        headers: {
          'content-type': `multipart/form-data; boundary=${boundary}`,
          ...(withLength ? { 'content-length': String(head.length + total + tail.length) } : {}),
        },
      });
      let done = false;
      const finish = (status: number | string) => {
        if (done) return;
        done = true;
        req.destroy();
        resolve({ sent, status });
      };
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => finish(`${res.statusCode} ${/<Code>(\w+)<\/Code>/.exec(text)?.[1] ?? ''}`));
        res.on('error', () => finish(`${res.statusCode} (cut)`));
      });
      req.on('error', (error: NodeJS.ErrnoException) => finish(error.code ?? 'error'));
      const write = () => {
        while (!done && sent < total) {
          const piece = sent === 0 ? Buffer.concat([head, chunk]) : chunk;
          sent += chunk.length;
          if (!req.write(piece)) return void req.once('drain', write);
        }
        if (!done) req.end(tail);
      };
      write();
    });
  }

  it.each([
    ['a Content-Length over the range: refused before the file is read', true],
    ['no Content-Length: refused once the file passes the range', false],
  ])('%s, without buffering it, the object unchanged', async (_name, withLength) => {
    const before = await stored();
    const total = 300 * 1024 * 1024;
    global.gc?.();
    const rss = process.memoryUsage().rss;
    const result = await stream(await policyFor(1024 * 1024), total, withLength);
    const grown = process.memoryUsage().rss - rss;
    // Refused (the answer, or the connection closed under the sender) long before 300 MB went out.
    expect(['400 EntityTooLarge', 'ECONNRESET', 'EPIPE']).toContain(result.status);
    expect(result.sent).toBeLessThan(100 * 1024 * 1024);
    expect(grown).toBeLessThan(64 * 1024 * 1024);
    expect(await stored()).toEqual(before);
  });

  it('a file of 20 MB within its range streams into parts and is stored whole', async () => {
    const p = await policyFor(20 * 1024 * 1024, 'uploads/c/big.txt');
    const result = await stream(p, 20 * 1024 * 1024, true);
    expect(result.status).toBe('204 ');
    const out = await s3.send(new GetObjectCommand({ Bucket: local.bucket, Key: 'uploads/c/big.txt' }));
    expect([out.ContentLength, out.ContentType]).toEqual([20 * 1024 * 1024, 'text/plain']);
    await out.Body!.transformToByteArray();
  });

  it('reads and lists only with a valid signature, in time; a signed GET takes its response overrides', async () => {
    const plain = async (url: string) => {
      const res = await fetch(url);
      return [res.status, /<Code>(\w+)<\/Code>/.exec(await res.text())?.[1] ?? ''];
    };
    expect(await plain(`${local.endpoint}/`)).toEqual([403, 'AccessDenied']);
    expect(await plain(`${local.endpoint}/${local.bucket}?list-type=2`)).toEqual([403, 'AccessDenied']);
    expect(await plain(`${local.endpoint}/${local.bucket}/${KEY}`)).toEqual([403, 'AccessDenied']);
    const get = new GetObjectCommand({
      Bucket: local.bucket,
      Key: KEY,
      ResponseContentType: 'application/octet-stream',
      ResponseContentDisposition: 'attachment; filename="kept.txt"',
    });
    const url = await getSignedUrl(s3, get, { expiresIn: 60 });
    const res = await fetch(url);
    expect([
      res.status,
      res.headers.get('content-type'),
      res.headers.get('content-disposition'),
      res.headers.get('x-content-type-options'),
      res.headers.get('content-security-policy'),
    ]).toEqual([
      200,
      'application/octet-stream',
      'attachment; filename="kept.txt"',
      'nosniff',
      "default-src 'none'; sandbox",
    ]);
    await res.arrayBuffer();
    const changed = new URL(url);
    changed.searchParams.set('response-content-type', 'text/html');
    expect(await plain(changed.href)).toEqual([403, 'SignatureDoesNotMatch']);
    const other = new URL(url);
    other.pathname = `/${local.bucket}/uploads/c/other.txt`;
    expect(await plain(other.href)).toEqual([403, 'SignatureDoesNotMatch']);
    const late = await getSignedUrl(s3, get, { expiresIn: 60, signingDate: new Date(Date.now() - 120_000) });
    expect(await plain(late)).toEqual([403, 'AccessDenied']);
  });
});
