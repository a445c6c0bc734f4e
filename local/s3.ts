/**
 * The local S3: a second fauxqs emulator in-process (its S3 side), with the media and search
 * index buckets created as the stack creates them, behind a small front server. With a data folder (npm
 * start: DATA_DIR/s3) the objects are kept between runs; without one they live in memory.
 *
 * fauxqs checks no signature, so the front checks every request as S3 would before anything
 * reaches it (local/sigv4.ts): a request signed in its header (the functions' SDK calls) or a
 * presigned URL (downloads over the inline limit), with the credentials of `LOCAL_S3_CREDENTIALS`,
 * whose secret is made anew by each process (the local runtime hands it to the functions
 * through AWS_SECRET_ACCESS_KEY): a page on the bucket's origin cannot list or read the bucket.
 *
 * Every answer carries `X-Content-Type-Options: nosniff` and a sandboxing CSP, and a GET's
 * answer takes the response-header overrides of its signed URL (`response-content-type`,
 * `response-content-disposition`, …), as S3 applies them: a presigned download is served as
 * the type and disposition the API chose, whatever the object was stored with.
 *
 * Browser-style form uploads (presigned POST) the front takes itself, because fauxqs 2.4.1
 * refuses request bodies over 11 MiB (a hard-coded limit; media files go up to 50 MB) and does
 * not check a POST policy at all. The front checks the form's signature and its policy as S3
 * does (expiry, bucket, key, Content-Type, every field named by a condition, the size range)
 * before it reads the file, refuses a body whose Content-Length is already over the range, and
 * streams the file to fauxqs in 8 MiB parts, counting: past the range's maximum it answers,
 * reads no further, and closes the connection. Nothing is stored before the whole file passed, so a
 * refused upload leaves the object at its key as it was.
 *
 * With an access hook (the deployment rehearsal, local/rehearse/iam/s3.ts), each request is
 * verified with the secret of the key it is signed with (each function signs with its own) and
 * authorized as that signer, presigned URLs and form uploads included, before anything is read
 * or forwarded: a denial is S3's 403 AccessDenied with IAM's sentence.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import busboy from 'busboy';
import { startFauxqsOnLoopback } from './fauxqs.js';
import { UNKNOWN_KEY, authorized, credentialsOf } from './s3-access.js';
import type { S3Access } from './s3-access.js';
import { fieldOf, queryPairs, signerKeyId, verifyPostSignature, verifyRequest } from './sigv4.js';
import type { Credentials, Refusal } from './sigv4.js';

export const LOCAL_MEDIA_BUCKET = 'chat-relay-media';
export const LOCAL_SEARCH_BUCKET = 'chat-relay-search';

/** The credentials the front takes signatures of: the key id of every local emulator, a secret of this process. */
export const LOCAL_S3_CREDENTIALS: Readonly<Credentials> = {
  accessKeyId: 'local',
  secretAccessKey: randomBytes(32).toString('hex'),
};

/** S3's largest POST upload (5 GiB): a body declared larger is refused before it is read. */
const MAX_FORM_BODY_BYTES = 5 * 1024 ** 3;
/** S3's limit on the form fields before the file (20 KB). */
const MAX_FORM_FIELDS_BYTES = 20 * 1024;
/** What may follow the file in a form (its closing boundary, fields S3 ignores): the Content-Length check's slack. */
const FORM_TAIL_SLACK_BYTES = 64 * 1024;
const PART_BYTES = 8 * 1024 * 1024;
/** How long the connection of a refused upload stays open, unread, for its answer to be read. */
const CLOSE_AFTER_MS = 5000;

/** On every answer of the front: nothing it serves is sniffed, runs, or acts as the bucket's origin. */
const SAFE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
} as const;
/** S3's response-header overrides of a signed GET: query parameter → response header. */
const OVERRIDES: Record<string, string> = {
  'response-content-type': 'content-type',
  'response-content-disposition': 'content-disposition',
  'response-cache-control': 'cache-control',
  'response-content-language': 'content-language',
  'response-content-encoding': 'content-encoding',
  'response-expires': 'expires',
};

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

/** `shared`: an emulator already running (the test run's, test/support/global-setup.mjs); the buckets get names of their own. */
export async function startLocalS3(dataDir?: string, access?: S3Access, shared?: string): Promise<LocalS3> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const server = shared
    ? undefined
    : await startFauxqsOnLoopback({ port: 0, logger: false, ...(dataDir ? { s3StorageDir: dataDir } : {}) });
  const upstream = shared ?? `http://127.0.0.1:${server!.port}`;
  const suffix = shared ? `-${randomBytes(6).toString('hex')}` : '';
  const [mediaBucket, searchBucket] = [LOCAL_MEDIA_BUCKET + suffix, LOCAL_SEARCH_BUCKET + suffix];
  const s3 = new S3Client({
    endpoint: upstream,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  for (const bucket of [mediaBucket, searchBucket]) {
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
      formUpload(s3, bucket, req, res, access).catch((error: unknown) =>
        s3Error(req, res, [500, 'InternalError', (error as Error).message]),
      );
      return;
    }
    const url = req.url ?? '/';
    const accessKeyId = signerKeyId(url, req.headers);
    const credentials = credentialsOf(accessKeyId, access, LOCAL_S3_CREDENTIALS);
    if (accessKeyId !== undefined && !credentials) return s3Error(req, res, UNKNOWN_KEY);
    // Unsigned, with an access hook or not, verifyRequest refuses it as S3 refuses an anonymous request.
    const refusal = verifyRequest(req.method ?? 'GET', url, req.headers, credentials ?? LOCAL_S3_CREDENTIALS);
    if (refusal) return s3Error(req, res, refusal);
    const pairs = queryPairs(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '');
    if (!access) return forward(req, res, url, pairs);
    authorized(access, accessKeyId!, req, url, pairs).then(
      (outcome) => (outcome.refusal ? s3Error(req, res, outcome.refusal) : forward(req, res, url, pairs, outcome.body)),
      (error: unknown) => s3Error(req, res, [500, 'InternalError', (error as Error).message]),
    );
  });

  function forward(req: IncomingMessage, res: ServerResponse, url: string, pairs: [string, string][], body?: Buffer) {
    const overrides = pairs.flatMap(([k, v]) => (OVERRIDES[k] ? [[OVERRIDES[k], v] as const] : []));
    const forward = httpRequest(`${upstream}${url}`, { method: req.method, headers: req.headers }, (answer) => {
      const status = answer.statusCode ?? 502;
      const headers: Record<string, string | string[] | undefined> = { ...answer.headers, ...SAFE_HEADERS };
      if (req.method === 'GET' && status < 300) for (const [name, value] of overrides) headers[name] = value;
      res.writeHead(status, headers);
      answer.pipe(res);
    });
    forward.on('error', (error) => s3Error(req, res, [502, 'InternalError', error.message]));
    if (body) forward.end(body);
    else req.pipe(forward);
  }
  await new Promise<void>((ok) => front.listen(0, '127.0.0.1', ok));
  const { port } = front.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket: mediaBucket,
    searchBucket,
    formUpload: (req, res) => {
      const isForm = req.method === 'POST' && /^multipart\/form-data/i.test(req.headers['content-type'] ?? '');
      if (!isForm) return s3Error(req, res, [405, 'MethodNotAllowed', 'Only form uploads (POST) are taken here.']);
      formUpload(s3, mediaBucket, req, res, access).catch((error: unknown) =>
        s3Error(req, res, [500, 'InternalError', (error as Error).message]),
      );
    },
    stop: async () => {
      front.closeAllConnections();
      await new Promise<void>((ok) => front.close(() => ok()));
      s3.destroy();
      await server?.stop();
    },
  };
}

/**
 * S3's XML error. A request whose body is still coming (a refused upload) is read no further:
 * its connection is closed `CLOSE_AFTER_MS` after the answer (closed at once, the unread bytes
 * make the close a reset, which can destroy the answer before the client has read it).
 */
function s3Error(req: IncomingMessage, res: ServerResponse, [status, code, message]: Refusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const unread = !req.complete;
  // `Connection: close` tells the client not to send another request on this connection (a
  // pooled connection reused after the refusal would be cut under that request). The server
  // then half-closes (FIN) at once, and closes for good only after CLOSE_AFTER_MS: a full close
  // with unread bytes is a reset, which can destroy the answer before the client has read it.
  res.writeHead(status, {
    'content-type': 'application/xml',
    ...SAFE_HEADERS,
    ...(unread ? { connection: 'close' } : {}),
  });
  if (unread) {
    const socket = req.socket;
    req.unpipe();
    req.pause();
    const timer = setTimeout(() => socket.destroy(), CLOSE_AFTER_MS);
    socket.once('close', () => clearTimeout(timer));
    // Node's server ends a `Connection: close` answer with destroySoon (end, then destroy):
    // keep the end, leave the destroy to the timer.
    socket.destroySoon = () => {
      socket.end();
    };
  }
  res.end(
    `<?xml version="1.0" ` +
      `encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message.replace(/[<&]/g, '')}</Message></Error>`,
  );
}

interface PostPolicy {
  expiration?: string;
  conditions?: unknown[];
}

/** The size range of a policy that passed: [min, max] bytes of the file. */
type SizeRange = [number, number];

const policyFailed = (condition: string): Refusal => [
  403,
  'AccessDenied',
  `Invalid according to Policy: Policy Condition failed: ${condition}`,
];

/**
 * A form's verdict before its file is read, as S3 gives it: the signature, then the policy's
 * expiry and each condition but the size range (bucket, key, Content-Type, the x-amz-* fields),
 * and every field but Policy, X-Amz-Signature and x-ignore-* named by some condition.
 */
function checkForm(
  bucket: string,
  fields: Record<string, string>,
  credentials: Credentials,
  now = Date.now(),
): SizeRange | Refusal {
  const bad = verifyPostSignature(fields, credentials);
  if (bad) return bad;
  let policy: PostPolicy;
  try {
    policy = JSON.parse(Buffer.from(fieldOf(fields, 'Policy')!, 'base64').toString('utf8')) as PostPolicy;
  } catch {
    return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid JSON.'];
  }
  if (typeof policy !== 'object' || policy === null || !Array.isArray(policy.conditions))
    return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid conditions.'];
  const expires = Date.parse(policy.expiration ?? '');
  if (Number.isNaN(expires)) return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid expiration.'];
  if (expires < now) return [403, 'AccessDenied', 'Invalid according to Policy: Policy expired.'];
  const value = (name: string) => (name.toLowerCase() === 'bucket' ? bucket : (fieldOf(fields, name) ?? ''));
  const named = new Set(['policy', 'x-amz-signature', 'file']);
  let range: SizeRange = [0, MAX_FORM_BODY_BYTES];
  for (const condition of policy.conditions) {
    if (Array.isArray(condition) && condition[0] === 'content-length-range') {
      const [min, max] = [Number(condition[1]), Number(condition[2])];
      if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max < min)
        return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid content-length-range.'];
      range = [Math.max(range[0], min), Math.min(range[1], max)];
      continue;
    }
    let op: string, name: string, expected: string;
    if (Array.isArray(condition) && condition.length === 3 && typeof condition[1] === 'string') {
      [op, name, expected] = [
        String(condition[0]).toLowerCase(),
        condition[1].replace(/^\$/, ''),
        String(condition[2]),
      ];
    } else if (condition && typeof condition === 'object' && !Array.isArray(condition)) {
      const entries = Object.entries(condition);
      if (entries.length !== 1) return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid Simple-Condition.'];
      [op, name, expected] = ['eq', entries[0]![0], String(entries[0]![1])];
    } else {
      return [400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid condition.'];
    }
    if (op !== 'eq' && op !== 'starts-with')
      return [400, 'InvalidPolicyDocument', `Invalid Policy: Invalid condition operator ${op}.`];
    named.add(name.toLowerCase());
    const actual = value(name);
    if (op === 'starts-with' ? !actual.startsWith(expected) : actual !== expected)
      return policyFailed(JSON.stringify([op, `$${name}`, expected]));
  }
  const extra = Object.keys(fields).filter((k) => !named.has(k.toLowerCase()) && !/^x-ignore-/i.test(k));
  if (extra.length > 0)
    return [403, 'AccessDenied', `Invalid according to Policy: Extra input fields: ${extra.join(', ')}`];
  if (!fieldOf(fields, 'key')) return [400, 'InvalidArgument', 'Bucket POST must contain a field named key.'];
  return range;
}

class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal[2]);
  }
}

/**
 * Streams a form's file into `key`, one part at a time, counting its bytes against `range`:
 * the object is written (put, or its multipart upload completed) only after the last byte.
 */
async function storeFile(
  s3: S3Client,
  bucket: string,
  key: string,
  contentType: string | undefined,
  file: Readable,
  [min, max]: SizeRange,
): Promise<void> {
  let size = 0;
  let held: Buffer[] = [];
  let heldBytes = 0;
  let uploadId: string | undefined;
  const parts: { ETag: string; PartNumber: number }[] = [];
  const sendPart = async () => {
    uploadId ??= (
      await s3.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }))
    ).UploadId!;
    const PartNumber = parts.length + 1;
    const body = Buffer.concat(held);
    [held, heldBytes] = [[], 0];
    const out = await s3.send(
      new UploadPartCommand({ Bucket: bucket, Key: key, UploadId: uploadId, PartNumber, Body: body }),
    );
    parts.push({ ETag: out.ETag!, PartNumber });
  };
  try {
    for await (const chunk of file as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max)
        throw new Refused([400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size']);
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes >= PART_BYTES) await sendPart();
    }
    if (size < min)
      throw new Refused([400, 'EntityTooSmall', 'Your proposed upload is smaller than the minimum allowed size']);
    if (uploadId === undefined) {
      await s3.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: Buffer.concat(held), ContentType: contentType }),
      );
      return;
    }
    if (heldBytes > 0) await sendPart();
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
  } catch (error) {
    if (uploadId !== undefined)
      await s3
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
        .catch(() => undefined);
    throw error;
  }
}

/**
 * A presigned POST: the form's fields, then its file. The form is checked when its file
 * begins (S3 takes the fields before the file only), and the file is streamed to storage.
 */
async function formUpload(
  s3: S3Client,
  bucket: string,
  req: IncomingMessage,
  res: ServerResponse,
  access?: S3Access,
): Promise<void> {
  const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
  if (declared !== undefined && declared > MAX_FORM_BODY_BYTES)
    return s3Error(req, res, [400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size']);
  let received = 0;
  req.on('data', (chunk: Buffer) => (received += chunk.length));
  const fields: Record<string, string> = {};
  let fieldBytes = 0;
  const outcome = await new Promise<Refusal | undefined>((resolve) => {
    let storing = false;
    const parser = busboy({
      headers: req.headers,
      limits: { fieldSize: MAX_FORM_FIELDS_BYTES, fields: 100, files: 1 },
    });
    parser.on('field', (name, value) => {
      fieldBytes += name.length + value.length;
      if (fieldBytes > MAX_FORM_FIELDS_BYTES)
        resolve([
          400,
          'MaxPostPreDataLengthExceeded',
          'Your POST request fields preceding the upload file were too large.',
        ]);
      else fields[name] = value;
    });
    parser.on('file', (name, stream) => {
      if (storing || name !== 'file' || fieldBytes > MAX_FORM_FIELDS_BYTES) {
        stream.resume();
        return;
      }
      storing = true;
      const accessKeyId = fieldOf(fields, 'X-Amz-Credential')?.split('/')[0];
      const credentials = credentialsOf(accessKeyId, access, LOCAL_S3_CREDENTIALS);
      if (!credentials) return resolve(UNKNOWN_KEY);
      const checked = checkForm(bucket, fields, credentials);
      if (checked.length === 3) return resolve(checked);
      const range = checked;
      // What is still to come is the file, but for its closing boundary: already over the range?
      if (declared !== undefined && declared - received - FORM_TAIL_SLACK_BYTES > range[1])
        return resolve([400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size']);
      const key = fieldOf(fields, 'key')!;
      const store = () =>
        storeFile(s3, bucket, key, fieldOf(fields, 'Content-Type'), stream, range).then(
          () => resolve(undefined),
          (error: unknown) => {
            if (error instanceof Refused) resolve(error.refusal);
            else resolve([500, 'InternalError', (error as Error).message]);
          },
        );
      if (!access) return void store();
      // The form is authorized as its signer, now (the file waits, unread, meanwhile).
      const request = { accessKeyId: accessKeyId!, method: 'POST', bucket, key, query: [], headers: req.headers };
      access.authorize({ ...request, authType: 'POST' }).then(
        (decision) => (decision.allowed ? void store() : resolve([403, 'AccessDenied', decision.message])),
        (error: unknown) => resolve([500, 'InternalError', (error as Error).message]),
      );
    });
    parser.on('close', () => {
      if (!storing) resolve([400, 'InvalidArgument', 'POST requires exactly one file upload per request.']);
    });
    parser.on('error', () =>
      resolve([400, 'MalformedPOSTRequest', 'The body of your POST request is not well-formed multipart/form-data.']),
    );
    req.pipe(parser);
  });
  if (outcome) return s3Error(req, res, outcome);
  res.writeHead(Number(fieldOf(fields, 'success_action_status')) === 201 ? 201 : 204, SAFE_HEADERS);
  res.end();
}
