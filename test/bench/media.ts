/**
 * The benchmark's media part, on a chat of its own, one request at a time: upload throughput
 * for a 1 MB file (direct multipart, direct JSON/base64, and the upload-session path: session,
 * presigned storage POST, finalize) and for a 20 MB file (session path; one direct attempt is
 * refused with 413); downloads of 1 MB (200 from the function) and 20 MB (307, then the
 * presigned GET), and a 1 KB range of the 20 MB file; thumbnail time for a 4000×3000 JPEG
 * (its direct upload against a same-size non-image upload, and sharp's makeThumbnail
 * in-process); DynamoDB calls and capacity per API request from the x-ddb-* headers (the
 * storage requests have none). MB here is 1,048,576 bytes. Every downloaded file is compared
 * with what was uploaded.
 *
 * The local S3 emulator (fauxqs 2.4.1) takes request bodies up to 11 MiB only: a 20 MB presigned
 * POST gets its 413. The part tries one; when it is refused, the 20 MB sessions store their
 * file with an S3 multipart upload (2 parts of 10 MB, same pending key and Content-Type) in
 * its place, and the tables say so. The session and finalize requests are the real ones.
 */
import { randomBytes } from 'node:crypto';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import sharp from 'sharp';
import { imageRuntime, makeThumbnail } from '../../functions/platform/images.js';
import { BENCH_CONFIG, BenchClient, CHATS } from './scenario.js';
import type { Failure, PhaseTiming } from './scenario.js';
import { percentile, textTable } from './stats.js';
import type { Sample } from './stats.js';

const MB = 1_048_576;
const SMALL_BYTES = 1 * MB;
const LARGE_BYTES = 20 * MB;
const RANGE_BYTES = 1024;
/** Part size of the multipart upload that stands in for a presigned POST the emulator refuses. */
const MULTIPART_PART_BYTES = 10 * MB;
const JPEG = { width: 4000, height: 3000, quality: 85, noise: 16 };
/** Timed repetitions of each measurement (after one untimed warm-up). */
const REPEATS = { small: 8, large: 5, thumbnail: 8 };

const FILES = '/api/v1/files';

/** Labels of the API requests, as they appear in the per-endpoint table. */
export const MEDIA_LABELS = {
  chatCreate: `POST ${CHATS} (for media)`,
  config: 'GET /api/v1/config (media)',
  multipart1: `POST ${CHATS}/{chatId}/media (1 MB multipart)`,
  json1: `POST ${CHATS}/{chatId}/media (1 MB JSON base64)`,
  session1: `POST ${CHATS}/{chatId}/media/uploads (1 MB)`,
  finalize1: `POST ${CHATS}/{chatId}/media/uploads/{uploadId}/complete (1 MB)`,
  session20: `POST ${CHATS}/{chatId}/media/uploads (20 MB)`,
  finalize20: `POST ${CHATS}/{chatId}/media/uploads/{uploadId}/complete (20 MB)`,
  jpeg: `POST ${CHATS}/{chatId}/media (JPEG 4000x3000 multipart)`,
  sameSize: `POST ${CHATS}/{chatId}/media (JPEG-size non-image multipart)`,
  get1: `GET ${FILES}/{mediaId} (1 MB, 200)`,
  get20: `GET ${FILES}/{mediaId} (20 MB, 307)`,
  range20: `GET ${FILES}/{mediaId} (1 KB range of 20 MB, 307)`,
  thumbnail: `GET ${FILES}/{mediaId}/thumbnail`,
} as const;

/** One line of a media table: a measurement over its repetitions. */
export interface MediaRow {
  label: string;
  count: number;
  errors: number;
  /** The statuses seen, e.g. "201" or "307+206". */
  status: string;
  p50Ms: number;
  p95Ms: number;
  /** File bytes over the p50 time, in MB/s (MB = 1,048,576 bytes); null where it is not a transfer. */
  mbPerSecond: number | null;
  /** Means per repetition from the x-ddb-* headers; null for storage requests (no headers). */
  calls: number | null;
  rcu: number | null;
  wcu: number | null;
}

export interface MediaReport {
  limits: { directUploadMaxBytes: number; maxUploadBytes: number };
  files: { smallBytes: number; largeBytes: number; jpegBytes: number; jpegWidth: number; jpegHeight: number };
  uploads: MediaRow[];
  downloads: MediaRow[];
  thumbnails: MediaRow[];
  /**
   * How the 20 MB sessions stored their file: the presigned POST, or (when the emulator refused
   * the probe POST) an S3 multipart upload; `probe` is that POST's answer.
   */
  largeStorage: { mode: 'post' | 'multipart'; probe: { status: number; ms: number; body: string } };
  /** The direct upload of the 20 MB file. */
  refused: {
    status: number;
    code: string | null;
    message: string | null;
    details: unknown;
    ms: number;
    usageHeaders: boolean;
  };
  thumbnail: {
    /** p50 of the JPEG's direct upload minus p50 of the same-size non-image upload. */
    uploadDifferenceMs: number;
    inProcessP50Ms: number;
    inProcessP95Ms: number;
    sharp: string;
    libvips: string;
    build: 'native' | 'wasm';
    width: number;
    height: number;
    webpBytes: number;
  };
}

export interface MediaScenarioResult {
  samples: Sample[];
  failures: Failure[];
  missingUsage: string[];
  phases: PhaseTiming[];
  media: MediaReport;
}

interface Usage {
  calls: number;
  rcu: number;
  wcu: number;
}

/** One timed step of a measurement. */
interface Point {
  ms: number;
  status: number;
  ok: boolean;
  /** Absent for storage requests. */
  usage?: Usage;
}

interface Response {
  status: number;
  headers: Headers;
  body: Buffer;
  point: Point;
}

interface Call {
  /** Label in the per-endpoint table; absent for storage requests (kept out of it). */
  label?: string;
  expect: number | readonly number[];
}

/** Records every timed request: API ones also as Samples for the per-endpoint table. */
class MediaClient {
  readonly samples: Sample[] = [];
  readonly failures: Failure[] = [];
  readonly missingUsage = new Set<string>();
  private readonly rows = new Map<string, { bytes: number | null; points: Point[] }>();
  /** False during warm-ups: nothing is recorded. */
  recording = false;

  constructor(readonly baseUrl: string) {}

  async fetch(url: string, init: RequestInit, call: Call): Promise<Response> {
    const started = performance.now();
    const res = await fetch(url.startsWith('http') ? url : `${this.baseUrl}${url}`, { redirect: 'manual', ...init });
    const body = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - started;
    const expected = typeof call.expect === 'number' ? [call.expect] : call.expect;
    const ok = expected.includes(res.status);
    const header = (name: string) => res.headers.get(name);
    const usage =
      header('x-ddb-calls') === null
        ? undefined
        : {
            calls: Number(header('x-ddb-calls')),
            rcu: Number(header('x-ddb-rcu') ?? 0),
            wcu: Number(header('x-ddb-wcu') ?? 0),
          };
    const point: Point = { ms, status: res.status, ok, ...(usage ? { usage } : {}) };
    if (!this.recording) return { status: res.status, headers: res.headers, body, point };
    if (call.label) {
      if (!usage) this.missingUsage.add(call.label);
      this.samples.push({
        label: call.label,
        status: res.status,
        ok,
        ms,
        calls: usage?.calls ?? 0,
        rcu: usage?.rcu ?? 0,
        wcu: usage?.wcu ?? 0,
        bytes: body.length,
      });
    }
    if (!ok) this.fail(call.label ?? 'storage', init.method ?? 'GET', url, res.status, body.toString('utf8', 0, 300));
    return { status: res.status, headers: res.headers, body, point };
  }

  fail(label: string, method: string, url: string, status: number, body: string): void {
    if (this.recording) this.failures.push({ label, method, path: url.replace(/\?.*$/, '?…'), status, body });
  }

  /** Adds a repetition to a table row; `bytes` (the file size) makes it a transfer with MB/s. */
  record(row: string, bytes: number | null, point: Point): void {
    if (!this.recording) return;
    const entry = this.rows.get(row) ?? { bytes, points: [] };
    entry.points.push(point);
    this.rows.set(row, entry);
  }

  row(label: string): MediaRow {
    const entry = this.rows.get(label);
    if (!entry) throw new Error(`media bench: nothing recorded for "${label}"`);
    const ms = entry.points.map((p) => p.ms).sort((a, b) => a - b);
    const p50 = percentile(ms, 50);
    const withUsage = entry.points.filter((p) => p.usage);
    const mean = (pick: (u: Usage) => number) =>
      withUsage.length === 0 ? null : withUsage.reduce((n, p) => n + pick(p.usage!), 0) / withUsage.length;
    return {
      label,
      count: entry.points.length,
      errors: entry.points.filter((p) => !p.ok).length,
      status: [...new Set(entry.points.map((p) => (p.status === 0 ? '-' : String(p.status))))].join('/'),
      p50Ms: p50,
      p95Ms: percentile(ms, 95),
      mbPerSecond: entry.bytes === null ? null : entry.bytes / MB / (p50 / 1000),
      calls: mean((u) => u.calls),
      rcu: mean((u) => u.rcu),
      wcu: mean((u) => u.wcu),
    };
  }
}

/** Steps taken one after the other, as one point: times added, statuses joined, usage summed. */
function whole(steps: readonly Point[]): Point {
  const api = steps.filter((s) => s.usage);
  return {
    ms: steps.reduce((n, s) => n + s.ms, 0),
    status: steps.at(-1)?.status ?? 0,
    ok: steps.every((s) => s.ok),
    ...(api.length > 0
      ? {
          usage: {
            calls: api.reduce((n, s) => n + s.usage!.calls, 0),
            rcu: api.reduce((n, s) => n + s.usage!.rcu, 0),
            wcu: api.reduce((n, s) => n + s.usage!.wcu, 0),
          },
        }
      : {}),
  };
}

interface MediaBody {
  id: string;
  kind: string;
  byte_size?: number;
  byteSize?: number;
}

const json = <T>(body: Buffer): T | undefined => {
  try {
    return JSON.parse(body.toString('utf8')) as T;
  } catch {
    return undefined;
  }
};

/** A 4000×3000 JPEG: gradients and waves under uniform noise, so it is not trivially compressible (~2 MB). */
async function noisyJpeg(): Promise<Buffer> {
  const { width: W, height: H, noise: amplitude } = JPEG;
  const raw = Buffer.alloc(W * H * 3);
  const noise = randomBytes(W * H * 3);
  for (let y = 0; y < H; y++) {
    const wave = 48 * Math.sin(y / 71);
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      const base0 = (x * 255) / W;
      const base1 = (y * 255) / H;
      const base2 = 96 + 64 * Math.sin(x / 97) + wave;
      raw[i] = Math.max(0, Math.min(255, base0 + ((noise[i]! / 255) * 2 - 1) * amplitude));
      raw[i + 1] = Math.max(0, Math.min(255, base1 + ((noise[i + 1]! / 255) * 2 - 1) * amplitude));
      raw[i + 2] = Math.max(0, Math.min(255, base2 + ((noise[i + 2]! / 255) * 2 - 1) * amplitude));
    }
  }
  return sharp(raw, { raw: { width: W, height: H, channels: 3 } })
    .jpeg({ quality: JPEG.quality })
    .toBuffer();
}

export async function runMediaScenarios(baseUrl: string, log: (line: string) => void): Promise<MediaScenarioResult> {
  const client = new MediaClient(baseUrl);
  const api = new BenchClient(baseUrl);
  const phases: PhaseTiming[] = [];
  const L = MEDIA_LABELS;
  const mediaPath = (chatId: string) => `${CHATS}/${chatId}/media`;

  const phase = async (name: string, body: () => Promise<void>) => {
    const before = client.samples.length + api.samples.length;
    const started = performance.now();
    await body();
    const timing = {
      name,
      requests: client.samples.length + api.samples.length - before,
      ms: performance.now() - started,
    };
    phases.push(timing);
    log(
      `  ${name.padEnd(40)} ${String(timing.requests).padStart(5)} requests  ` +
        `${(timing.ms / 1000).toFixed(1).padStart(6)} s`,
    );
  };

  // Set-up: the chat, the limits, the files.
  const { body: config } = await api.request<{ maxUploadBytes: number; directUploadMaxBytes: number }>(
    L.config,
    'GET',
    '/api/v1/config',
  );
  const limits = {
    directUploadMaxBytes: config?.directUploadMaxBytes ?? Number.NaN,
    maxUploadBytes: config?.maxUploadBytes ?? Number.NaN,
  };
  if (!(
    SMALL_BYTES <= limits.directUploadMaxBytes &&
    LARGE_BYTES > limits.directUploadMaxBytes &&
    LARGE_BYTES <= limits.maxUploadBytes
  )) {
    throw new Error(
      `media bench: expects 1 MB ≤ directUploadMaxBytes < 20 MB ≤ maxUploadBytes, /config says ` +
        `${JSON.stringify(limits)}`,
    );
  }
  const chatBody = {
    agentIds: [BENCH_CONFIG.agents[0]!.id],
    modelId: BENCH_CONFIG.models[0]!.id,
    title: 'media bench',
  };
  const { body: chat } = await api.request<{ id: string }>(L.chatCreate, 'POST', CHATS, {
    body: chatBody,
    expect: 201,
  });
  if (!chat?.id) throw new Error('media bench: could not create its chat');
  const chatId = chat.id;
  const small = randomBytes(SMALL_BYTES);
  const large = randomBytes(LARGE_BYTES);
  const started = performance.now();
  const jpeg = await noisyJpeg();
  const sameSize = randomBytes(jpeg.length);
  log(
    `  media files: 1 MB and 20 MB random, JPEG ${JPEG.width}x${JPEG.height} ${(jpeg.length / MB).toFixed(2)} MB ` +
      `(made in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );

  const multipart = (bytes: Buffer, fileName: string, contentType: string, fields: Record<string, string> = {}) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob([bytes], { type: contentType }), fileName);
    return form;
  };

  /** Direct upload; answers the media id. */
  const direct = async (
    row: string,
    label: string,
    bytes: Buffer,
    fileName: string,
    contentType: string,
    as: 'multipart' | 'json',
  ): Promise<string | undefined> => {
    const init: RequestInit =
      as === 'multipart'
        ? { method: 'POST', body: multipart(bytes, fileName, contentType) }
        : {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ fileName, contentType, base64Data: bytes.toString('base64') }),
          };
    const res = await client.fetch(mediaPath(chatId), init, { label, expect: 201 });
    client.record(row, bytes.length, res.point);
    return json<MediaBody>(res.body)?.id;
  };

  let s3: S3Client | undefined;
  /** The emulator's stand-in for a presigned POST it refuses: the same object by S3 multipart upload. */
  const multipartUpload = async (url: string, key: string, contentType: string, bytes: Buffer): Promise<Point> => {
    const { origin, pathname } = new URL(url);
    const Bucket = decodeURIComponent(pathname.split('/')[1] ?? '');
    s3 ??= new S3Client({
      endpoint: origin,
      forcePathStyle: true,
      region: 'us-east-1',
      // The local runtime's credentials (the local S3 checks signatures with a secret of its process).
      credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID!, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY! },
    });
    const started = performance.now();
    const { UploadId } = await s3.send(
      new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType: contentType }),
    );
    const parts = [];
    for (let at = 0, n = 1; at < bytes.length; at += MULTIPART_PART_BYTES, n++) {
      const { ETag } = await s3.send(
        new UploadPartCommand({
          Bucket,
          Key: key,
          UploadId,
          PartNumber: n,
          Body: bytes.subarray(at, at + MULTIPART_PART_BYTES),
        }),
      );
      parts.push({ ETag, PartNumber: n });
    }
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
    );
    return { ms: performance.now() - started, status: 200, ok: true };
  };

  /** Session, storage POST (or its stand-in), finalize; each stage and the whole recorded. Answers the media id. */
  const session = async (
    rows: { whole: string; open: string; post: string; finalize: string },
    labels: { open: string; finalize: string },
    bytes: Buffer,
    store: 'post' | 'multipart' = 'post',
  ): Promise<string | undefined> => {
    const contentType = 'application/octet-stream';
    const open = await client.fetch(
      `${mediaPath(chatId)}/uploads`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ fileName: 'session.bin', contentType, byteSize: bytes.length }),
      },
      { label: labels.open, expect: 201 },
    );
    client.record(rows.open, null, open.point);
    const opened = json<{ uploadId: string; url: string; fields: Record<string, string> }>(open.body);
    if (!opened?.uploadId) return undefined;
    const post =
      store === 'post'
        ? (
            await client.fetch(
              opened.url,
              { method: 'POST', body: multipart(bytes, 'session.bin', contentType, opened.fields) },
              { expect: [200, 201, 204] },
            )
          ).point
        : await multipartUpload(opened.url, opened.fields.key ?? '', contentType, bytes);
    client.record(rows.post, bytes.length, post);
    const done = await client.fetch(
      `${mediaPath(chatId)}/uploads/${opened.uploadId}/complete`,
      { method: 'POST' },
      { label: labels.finalize, expect: 201 },
    );
    client.record(rows.finalize, null, done.point);
    client.record(rows.whole, bytes.length, whole([open.point, post, done.point]));
    return json<MediaBody>(done.body)?.id;
  };

  /** GET /files/{id}: 200 from the function, or 307 then the presigned GET; the bytes checked. */
  const download = async (
    rows: { whole: string; api?: string; storage?: string },
    label: string,
    mediaId: string,
    expected: Buffer,
    range?: { start: number; end: number },
  ) => {
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end}` } : {};
    const first = await client.fetch(`${FILES}/${mediaId}`, { headers }, { label, expect: rows.storage ? 307 : 200 });
    let res = first;
    const steps = [first.point];
    if (rows.storage) {
      const location = first.headers.get('location');
      if (!location) return client.fail(label, 'GET', `${FILES}/${mediaId}`, first.status, 'no location header');
      res = await client.fetch(location, { headers }, { expect: range ? 206 : 200 });
      steps.push(res.point);
      if (rows.api) client.record(rows.api, null, first.point);
      client.record(rows.storage, range ? null : expected.length, res.point);
    }
    const want = range ? expected.subarray(range.start, range.end + 1) : expected;
    if (!res.body.equals(want)) {
      client.fail(
        label,
        'GET',
        `${FILES}/${mediaId}`,
        res.status,
        `content differs: ${res.body.length} bytes received, ${want.length} expected`,
      );
      steps.push({ ms: 0, status: res.status, ok: false });
    }
    client.record(rows.whole, range ? null : expected.length, whole(steps));
  };

  const repeat = async (times: number, body: (i: number) => Promise<void>) => {
    client.recording = false;
    await body(-1); // warm-up: first connections, first module paths
    client.recording = true;
    for (let i = 0; i < times; i++) await body(i);
  };

  const R = {
    multipart1: 'direct multipart, 1 MB',
    json1: 'direct JSON/base64, 1 MB (body 1.33 MB)',
    session1: 'session path, 1 MB: whole',
    session20: 'session path, 20 MB: whole',
    refused20: 'direct multipart, 20 MB (refused)',
    open: '  1. POST …/media/uploads',
    post: '  2. storage POST (presigned form)',
    multipartPost: '  2. storage: S3 multipart upload (*)',
    finalize: '  3. POST …/uploads/{id}/complete',
    get1: 'GET /files/{id}, 1 MB (200 from the function)',
    get20: 'GET /files/{id}, 20 MB: whole',
    range20: '1 KB range of the 20 MB file: whole',
    redirect: '  1. GET /files/{id} → 307',
    presigned: '  2. presigned GET → 200',
    presignedRange: '  2. presigned GET (Range) → 206',
    jpeg: `direct multipart, JPEG ${JPEG.width}x${JPEG.height} (image/jpeg)`,
    sameSize: 'direct multipart, same size, application/octet-stream',
    inProcess: 'makeThumbnail in-process (bench process)',
    thumbGet: 'GET /files/{id}/thumbnail',
  } as const;
  const stage = (size: string, step: string) => `${step} [${size}]`;

  let smallId: string | undefined;
  let largeId: string | undefined;
  let jpegId: string | undefined;
  let refused: MediaReport['refused'] | undefined;
  let largeStorage: MediaReport['largeStorage'] | undefined;

  await phase('media: 1 MB uploads', async () => {
    await repeat(REPEATS.small, async () => {
      smallId =
        (await direct(R.multipart1, L.multipart1, small, 'small.bin', 'application/octet-stream', 'multipart')) ??
        smallId;
    });
    await repeat(REPEATS.small, async () => {
      await direct(R.json1, L.json1, small, 'small.bin', 'application/octet-stream', 'json');
    });
    await repeat(REPEATS.small, async () => {
      const rows = {
        whole: R.session1,
        open: stage('1 MB', R.open),
        post: stage('1 MB', R.post),
        finalize: stage('1 MB', R.finalize),
      };
      await session(rows, { open: L.session1, finalize: L.finalize1 }, small);
    });
  });

  await phase('media: 20 MB uploads', async () => {
    client.recording = true;
    const res = await client.fetch(
      mediaPath(chatId),
      { method: 'POST', body: multipart(large, 'large.bin', 'application/octet-stream') },
      { expect: 413 },
    );
    client.record(R.refused20, null, res.point);
    const error = json<{ error?: { code?: string; message?: string; details?: unknown } }>(res.body)?.error;
    refused = {
      status: res.status,
      code: error?.code ?? null,
      message: error?.message ?? null,
      details: error?.details ?? null,
      ms: res.point.ms,
      usageHeaders: res.point.usage !== undefined,
    };
    // Does the storage take a 20 MB presigned POST? (fauxqs 2.4.1 stops at 11 MiB.)
    client.recording = false;
    const probeOpen = await client.fetch(
      `${mediaPath(chatId)}/uploads`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          fileName: 'probe.bin',
          contentType: 'application/octet-stream',
          byteSize: large.length,
        }),
      },
      { expect: 201 },
    );
    const probeSession = json<{ url: string; fields: Record<string, string> }>(probeOpen.body);
    if (!probeSession?.url)
      throw new Error(
        `media bench: no 20 MB upload session: ${probeOpen.status} ${probeOpen.body.toString('utf8', 0, 300)}`,
      );
    const probe = await client.fetch(
      probeSession.url,
      { method: 'POST', body: multipart(large, 'probe.bin', 'application/octet-stream', probeSession.fields) },
      { expect: [200, 201, 204] },
    );
    largeStorage = {
      mode: probe.point.ok ? 'post' : 'multipart',
      probe: { status: probe.status, ms: probe.point.ms, body: probe.body.toString('utf8', 0, 300) },
    };
    if (!probe.point.ok)
      log(
        `  20 MB presigned POST refused by the storage (${probe.status}): the 20 MB sessions store by S3 multipart ` +
          `upload instead`,
      );
    const post = largeStorage.mode === 'post' ? R.post : R.multipartPost;
    await repeat(REPEATS.large, async () => {
      const rows = {
        whole: R.session20,
        open: stage('20 MB', R.open),
        post: stage('20 MB', post),
        finalize: stage('20 MB', R.finalize),
      };
      largeId =
        (await session(rows, { open: L.session20, finalize: L.finalize20 }, large, largeStorage!.mode)) ?? largeId;
    });
  });

  await phase('media: downloads', async () => {
    if (!smallId || !largeId)
      throw new Error(`media bench: the uploads to download failed: ${JSON.stringify(client.failures.slice(0, 3))}`);
    await repeat(REPEATS.small, async () => download({ whole: R.get1 }, L.get1, smallId!, small));
    await repeat(REPEATS.large, async () =>
      download({ whole: R.get20, api: stage('20 MB', R.redirect), storage: R.presigned }, L.get20, largeId!, large),
    );
    const start = 10 * MB + 12_345;
    await repeat(REPEATS.small, async () =>
      download(
        { whole: R.range20, api: stage('1 KB range', R.redirect), storage: R.presignedRange },
        L.range20,
        largeId!,
        large,
        { start, end: start + RANGE_BYTES - 1 },
      ),
    );
  });

  let made: Awaited<ReturnType<typeof makeThumbnail>> | undefined;
  await phase('media: thumbnails', async () => {
    // Alternated, so both see the same machine state.
    await repeat(REPEATS.thumbnail, async () => {
      jpegId = (await direct(R.jpeg, L.jpeg, jpeg, 'photo.jpg', 'image/jpeg', 'multipart')) ?? jpegId;
      await direct(R.sameSize, L.sameSize, sameSize, 'photo.bin', 'application/octet-stream', 'multipart');
    });
    if (!jpegId) throw new Error(`media bench: the JPEG upload failed: ${JSON.stringify(client.failures.slice(0, 3))}`);
    await repeat(REPEATS.thumbnail, async () => {
      const res = await client.fetch(`${FILES}/${jpegId}/thumbnail`, {}, { label: L.thumbnail, expect: 200 });
      client.record(R.thumbGet, null, res.point);
    });
    await repeat(REPEATS.thumbnail, async () => {
      const t = performance.now();
      made = await makeThumbnail(jpeg);
      client.record(R.inProcess, null, { ms: performance.now() - t, status: 0, ok: true });
    });
  });

  s3?.destroy();
  const runtime = await imageRuntime();
  const rows = (labels: readonly string[]) => labels.map((l) => client.row(l));
  const sizeStages = (size: string, post: string) => [stage(size, R.open), stage(size, post), stage(size, R.finalize)];
  const thumbnails = rows([R.jpeg, R.sameSize, R.inProcess, R.thumbGet]);
  const media: MediaReport = {
    limits,
    files: {
      smallBytes: SMALL_BYTES,
      largeBytes: LARGE_BYTES,
      jpegBytes: jpeg.length,
      jpegWidth: JPEG.width,
      jpegHeight: JPEG.height,
    },
    uploads: rows([
      R.multipart1,
      R.json1,
      R.session1,
      ...sizeStages('1 MB', R.post),
      R.session20,
      ...sizeStages('20 MB', largeStorage!.mode === 'post' ? R.post : R.multipartPost),
      R.refused20,
    ]),
    downloads: rows([
      R.get1,
      R.get20,
      stage('20 MB', R.redirect),
      R.presigned,
      R.range20,
      stage('1 KB range', R.redirect),
      R.presignedRange,
    ]),
    thumbnails,
    largeStorage: largeStorage!,
    refused: refused!,
    thumbnail: {
      uploadDifferenceMs: thumbnails[0]!.p50Ms - thumbnails[1]!.p50Ms,
      inProcessP50Ms: thumbnails[2]!.p50Ms,
      inProcessP95Ms: thumbnails[2]!.p95Ms,
      ...runtime,
      width: made?.width ?? 0,
      height: made?.height ?? 0,
      webpBytes: made?.webp.length ?? 0,
    },
  };
  for (const label of api.missingUsage) client.missingUsage.add(label);
  return {
    samples: [...api.samples, ...client.samples],
    failures: [...api.failures, ...client.failures],
    missingUsage: [...client.missingUsage],
    phases,
    media,
  };
}

const f1 = (n: number | null) => (n === null || !Number.isFinite(n) ? '-' : n.toFixed(1));
const f2 = (n: number | null) => (n === null || !Number.isFinite(n) ? '-' : n.toFixed(2));

function rowTable(title: string, rows: readonly MediaRow[]): string {
  const header = [title, 'count', 'err', 'status', 'p50 ms', 'p95 ms', 'MB/s', 'calls', 'RCU', 'WCU'];
  return textTable(
    header,
    rows.map((r) => [
      r.label.replace(/ \[.*\]$/, ''),
      String(r.count),
      String(r.errors),
      r.status,
      f1(r.p50Ms),
      f1(r.p95Ms),
      f1(r.mbPerSecond),
      f2(r.calls),
      f2(r.rcu),
      f2(r.wcu),
    ]),
  );
}

export function mediaTables(report: MediaReport): string {
  const { refused: r, thumbnail: t, files, largeStorage } = report;
  const probe = /"message":"([^"]*)"/.exec(largeStorage.probe.body)?.[1] ?? largeStorage.probe.body.slice(0, 120);
  const details = r.details && typeof r.details === 'object' ? ` ${JSON.stringify(r.details)}` : '';
  const lines = [
    rowTable('upload', report.uploads),
    '',
    ...(largeStorage.mode === 'multipart'
      ? [
          `(*) The storage (the local S3 emulator, fauxqs) refused the 20 MB presigned POST: ` +
            `${largeStorage.probe.status} "${probe}" in ${largeStorage.probe.ms.toFixed(1)} ms ` +
            '(its request bodies stop at 11 MiB), so locally a session cannot take a file over ~11 MB that way. The ' +
            '20 MB sessions above stored their file ' +
            `with an S3 multipart upload instead (${MULTIPART_PART_BYTES / MB} MB parts, same pending key and ` +
            `Content-Type); their session and finalize requests are the real ones.`,
        ]
      : []),
    `20 MB direct attempt: ${r.status} ${r.code ?? ''} "${r.message ?? ''}"${details} in ${r.ms.toFixed(1)} ms, ` +
      (r.usageHeaders
        ? 'answered by the function.'
        : "no x-ddb-* headers: answered by the local adapter (API Gateway's 10 MB payload limit) before any " +
          'function ran.'),
    '',
    rowTable('download', report.downloads),
    '',
    rowTable(
      `thumbnail (JPEG ${files.jpegWidth}x${files.jpegHeight}, ${(files.jpegBytes / MB).toFixed(2)} MB)`,
      report.thumbnails,
    ),
    '',
    `Thumbnail in the upload request: ${t.uploadDifferenceMs.toFixed(1)} ms (p50 of the JPEG upload minus p50 of ` +
      `the same-size non-image upload; includes storing the thumbnail).`,
    `makeThumbnail in-process: p50 ${t.inProcessP50Ms.toFixed(1)} ms, p95 ${t.inProcessP95Ms.toFixed(1)} ms → ` +
      `${t.width}x${t.height} WebP, ${t.webpBytes} bytes; sharp ${t.sharp}, libvips ${t.libvips}, ${t.build} build.`,
    t.build === 'native'
      ? "This machine runs sharp's native build; Lambda runs its WebAssembly build (@img/sharp-wasm32), roughly " +
        '2-3x slower: expect the thumbnail to take that much longer there.'
      : "This process runs sharp's WebAssembly build, as Lambda does.",
  ];
  return lines.join('\n');
}
