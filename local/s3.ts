/**
 * The local S3: a second fauxqs emulator in-process (its S3 side), with the media and search
 * index buckets created as the stack creates them, behind a small front server. With a data folder (npm
 * start: DATA_DIR/s3) the objects are kept between runs; without one they live in memory.
 *
 * The front passes every request through to fauxqs except browser-style form uploads
 * (presigned POST), which it takes itself, because fauxqs 2.4.1 refuses request bodies over
 * 11 MiB (a hard-coded limit; media files go up to 50 MB) and does not check a POST policy at
 * all. The front checks the policy as S3 does (expiry, bucket, key, Content-Type, size range)
 * and stores the file in fauxqs by a multipart upload of 8 MiB parts.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import {
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import busboy from 'busboy';
import { startFauxqsOnLoopback } from './fauxqs.js';

export const LOCAL_MEDIA_BUCKET = 'chat-relay-media';
export const LOCAL_SEARCH_BUCKET = 'chat-relay-search';

/** A form upload's file is buffered up to this size (the media maximum is 50 MB). */
const MAX_FORM_FILE_BYTES = 5 * 1024 * 1024 * 1024;
const PART_BYTES = 8 * 1024 * 1024;

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  searchBucket: string;
  /**
   * Takes a presigned form upload to the media bucket that reached the API's own origin
   * (lib/web-policy.ts MEDIA_UPLOAD_PATH), as the bucket itself would.
   */
  formUpload: (req: IncomingMessage, res: ServerResponse) => void;
  stop: () => Promise<void>;
}

export async function startLocalS3(dataDir?: string): Promise<LocalS3> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const server = await startFauxqsOnLoopback({ port: 0, logger: false, ...(dataDir ? { s3StorageDir: dataDir } : {}) });
  const upstream = `http://127.0.0.1:${server.port}`;
  const s3 = new S3Client({
    endpoint: upstream,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  for (const bucket of [LOCAL_MEDIA_BUCKET, LOCAL_SEARCH_BUCKET]) {
    try {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    } catch (error) {
      const name = (error as Error).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
    }
  }

  const front = createServer((req, res) => {
    const isForm = req.method === 'POST' && /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
    if (isForm) {
      const bucket = decodeURIComponent((req.url ?? '/').split('?')[0]!.split('/')[1] ?? '');
      formUpload(s3, bucket, req, res).catch((error: unknown) =>
        s3Error(res, 500, 'InternalError', (error as Error).message),
      );
      return;
    }
    const forward = httpRequest(
      `${upstream}${req.url ?? '/'}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', (error) => s3Error(res, 502, 'InternalError', error.message));
    req.pipe(forward);
  });
  await new Promise<void>((ok) => front.listen(0, '127.0.0.1', ok));
  const { port } = front.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: LOCAL_MEDIA_BUCKET,
    searchBucket: LOCAL_SEARCH_BUCKET,
    formUpload: (req, res) => {
      const isForm = req.method === 'POST' && /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
      if (!isForm) return s3Error(res, 405, 'MethodNotAllowed', 'Only form uploads (POST) are taken here.');
      formUpload(s3, LOCAL_MEDIA_BUCKET, req, res).catch((error: unknown) =>
        s3Error(res, 500, 'InternalError', (error as Error).message),
      );
    },
    stop: async () => {
      front.closeAllConnections();
      await new Promise<void>((ok) => front.close(() => ok()));
      s3.destroy();
      await server.stop();
    },
  };
}

function s3Error(res: ServerResponse, status: number, code: string, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(
    `<?xml version="1.0" ` +
      `encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message.replace(/[<&]/g, '')}</Message></Error>`,
  );
}

interface PostPolicy {
  expiration?: string;
  conditions?: unknown[];
}

/** The POST policy's verdict on a form upload, as S3 gives it: undefined when it passes. */
function policyFailure(
  policy: PostPolicy,
  bucket: string,
  fields: Record<string, string>,
  size: number,
): [number, string, string] | undefined {
  if (!policy.expiration || Date.parse(policy.expiration) < Date.now())
    return [403, 'AccessDenied', 'Invalid according to Policy: Policy expired.'];
  const value = (name: string) =>
    name.toLowerCase() === 'bucket'
      ? bucket
      : (fields[Object.keys(fields).find((k) => k.toLowerCase() === name.toLowerCase()) ?? ''] ?? '');
  for (const condition of policy.conditions ?? []) {
    if (Array.isArray(condition) && condition[0] === 'content-length-range') {
      if (size < Number(condition[1]))
        return [400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size'];
      if (size > Number(condition[2]))
        return [400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size'];
      continue;
    }
    const [op, name, expected] = Array.isArray(condition)
      ? [String(condition[0]), String(condition[1]).replace(/^\$/, ''), String(condition[2])]
      : ['eq', Object.keys(condition as object)[0] ?? '', String(Object.values(condition as object)[0])];
    const actual = value(name);
    const ok = op === 'starts-with' ? actual.startsWith(expected) : actual === expected;
    if (!ok)
      return [
        403,
        'AccessDenied',
        `Invalid according to Policy: Policy Condition failed: ["${op}", "$${name}", "${expected}"]`,
      ];
  }
  return undefined;
}

/** A presigned POST: the form's fields, then its file; checked against the policy, then stored. */
async function formUpload(s3: S3Client, bucket: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const fields: Record<string, string> = {};
  const chunks: Buffer[] = [];
  let size = 0;
  let sawFile = false;
  let tooLarge = false;
  await new Promise<void>((ok, fail) => {
    const parser = busboy({ headers: req.headers, limits: { fileSize: MAX_FORM_FILE_BYTES } });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (_name, stream) => {
      sawFile = true;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        chunks.push(chunk);
      });
      stream.on('limit', () => (tooLarge = true));
    });
    parser.on('close', ok);
    parser.on('error', fail);
    req.pipe(parser);
  });
  if (!sawFile || !fields.key || !fields.Policy)
    return s3Error(res, 400, 'InvalidArgument', 'A POST upload needs key, Policy and file.');
  if (tooLarge) return s3Error(res, 400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size');
  let policy: PostPolicy;
  try {
    policy = JSON.parse(Buffer.from(fields.Policy, 'base64').toString('utf8')) as PostPolicy;
  } catch {
    return s3Error(res, 400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid JSON.');
  }
  const failure = policyFailure(policy, bucket, fields, size);
  if (failure) return s3Error(res, ...failure);

  const body = Buffer.concat(chunks);
  const contentType = fields['Content-Type'] ?? fields['content-type'];
  if (body.length <= PART_BYTES) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: fields.key, Body: body, ContentType: contentType }));
  } else {
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: fields.key, ContentType: contentType }),
    );
    const parts: { ETag: string; PartNumber: number }[] = [];
    for (let offset = 0, n = 1; offset < body.length; offset += PART_BYTES, n++) {
      const out = await s3.send(
        new UploadPartCommand({
          Bucket: bucket,
          Key: fields.key,
          UploadId,
          PartNumber: n,
          Body: body.subarray(offset, offset + PART_BYTES),
        }),
      );
      parts.push({ ETag: out.ETag!, PartNumber: n });
    }
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: fields.key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  }
  res.writeHead(Number(fields.success_action_status) === 201 ? 201 : 204);
  res.end();
}
