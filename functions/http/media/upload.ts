/**
 * POST /api/v1/chats/{chatId}/media: upload a file as multipart/form-data or as JSON with
 * base64 data (contract §5.6.2). readUpload reads the body (checks 1–7 and the form's own
 * shape) at the validation stage, so an Idempotency-Key's fingerprint covers the file's digest,
 * name, content type, kind and messageId (§1.10); core/media-upload.ts makes checks 8–16 and
 * stores the file.
 */
import busboy from 'busboy';
import * as Media from '../../core/media-upload.js';
import { FieldRuleError, PayloadTooLargeError, ValidationError } from '../../errors.js';
import { http } from '../../middleware/http.js';
import { json, uploadRefused } from '../../model/replies.js';
import { Media as MediaRecord } from '../../model/resources.js';
import type { InstanceConfig } from '../../platform/instance-config.js';
import type { HttpEvent } from '../../middleware/types.js';
import { header } from '../../middleware/types.js';
import { chatPath } from '../chats/path.js';

/** A multipart body may exceed the file cap by this much envelope (§8.5). */
const MULTIPART_OVERHEAD = 262_144;

const bodyBytes = (event: HttpEvent): Buffer =>
  event.body ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : Buffer.alloc(0);

/** How far into a part its headers may reach (busboy's own limit on a part's header block is 16 KB). */
const PART_HEADER_BYTES = 16 * 1024;

/**
 * The `Content-Type` header of the form's first file part named `file`, as sent. busboy reads a
 * part's type leniently (a value it cannot parse, such as `audio/mpeg;,text/html`, becomes
 * `text/plain`, and parameters are dropped): the core parses the header itself (§8.1), so
 * that what is not one media type is refused in this form as in JSON.
 */
export function fileTypeAsSent(body: Buffer, contentType: string): string | undefined {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) return undefined;
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}\r\n`);
  for (let at = body.indexOf(delimiter); at >= 0; at = body.indexOf(delimiter, at + delimiter.length)) {
    if (at > 0 && body.subarray(at - 2, at).toString('latin1') !== '\r\n') continue;
    const start = at + delimiter.length;
    const end = body.subarray(start, start + PART_HEADER_BYTES).indexOf('\r\n\r\n');
    if (end < 0) continue;
    const lines = body
      .subarray(start, start + end)
      .toString('latin1')
      .split('\r\n');
    const value = (name: string) =>
      lines
        .find((line) => line.toLowerCase().startsWith(`${name}:`))
        ?.slice(name.length + 1)
        .trim();
    const disposition = value('content-disposition') ?? '';
    if (!/;\s*name\s*=\s*(?:"file"|file)\s*(?:;|$)/i.test(disposition) || !/;\s*filename\*?\s*=/i.test(disposition))
      continue;
    return value('content-type');
  }
  return undefined;
}

/** Checks 1–5 and the parts' shapes. */
async function fromMultipart(event: HttpEvent, contentType: string, cap: number): Promise<Media.Upload> {
  const maxBodyBytes = cap + MULTIPART_OVERHEAD;
  const declared = header(event, 'content-length');
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBodyBytes) {
    throw new PayloadTooLargeError('multipart body exceeds maxUploadBytes.', {
      field: 'file',
      maxBodyBytes,
      contentLength: Number(declared),
    });
  }
  const body = bodyBytes(event);
  if (body.length > maxBodyBytes)
    throw new PayloadTooLargeError('multipart body exceeds maxUploadBytes.', { field: 'file', maxBodyBytes });

  const sentType = fileTypeAsSent(body, contentType);
  return new Promise<Media.Upload>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // busboy stops a file that reaches fileSize; a file of exactly `cap` bytes is allowed.
        limits: { fileSize: cap + 1, fields: 20, files: 5, parts: 30 },
        // The file name as sent, directories included: §8.3's sanitizing replaces the separators.
        preservePath: true,
        // A plain filename="…" is read as UTF-8 (busboy's default is latin1, which made each byte of
        // a non-ASCII character a character of its own: 'é' became '__'); filename*=charset''…
        // (RFC 5987) names its own charset.
        defParamCharset: 'utf8',
      });
    } catch {
      reject(new ValidationError('Invalid multipart body.'));
      return;
    }
    let file: { name: string; type: string; chunks: Buffer[]; tooLarge: boolean } | undefined;
    const fields: Record<string, string> = {};
    let problem: Error | undefined;
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || file) {
        // A stray file: `kind` or `messageId` sent as a file is check 4; anything else is ignored.
        if ((name === 'kind' || name === 'messageId') && !problem)
          problem = new FieldRuleError(name, `${name} must be a string.`);
        stream.resume();
        return;
      }
      const current = {
        name: info.filename ?? '',
        type: sentType ?? (info.mimeType || 'application/octet-stream'),
        chunks: [] as Buffer[],
        tooLarge: false,
      };
      file = current;
      stream.on('data', (chunk: Buffer) => current.chunks.push(chunk));
      stream.on('limit', () => (current.tooLarge = true));
    });
    parser.on('field', (name, value) => {
      if (name === 'kind' || name === 'messageId') fields[name] = value;
    });
    parser.on('error', () => reject(new ValidationError('Invalid multipart body.')));
    parser.on('close', () => {
      if (problem) return reject(problem);
      if (!file) return reject(new FieldRuleError('file', 'file is required.'));
      if (file.tooLarge)
        return reject(new PayloadTooLargeError('file exceeds maxUploadBytes.', { field: 'file', maxUploadBytes: cap }));
      resolve({
        fileName: file.name,
        contentType: file.type,
        bytes: Buffer.concat(file.chunks),
        kind: fields.kind,
        messageId: fields.messageId,
      });
    });
    parser.end(body);
  });
}

/** Standard base64 with padding; a flat character class, so a 5 MB string costs one linear scan. */
const isStandardBase64 = (text: string) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);

/** Checks 6–7 (and the shapes of `kind` and `messageId`); any content type but multipart is JSON. */
function fromJson(event: HttpEvent): Media.Upload {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyBytes(event).toString('utf8'));
  } catch {
    throw new ValidationError('Invalid JSON body.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ValidationError('JSON body must be an object.');
  const body = parsed as Record<string, unknown>;
  const required = (field: 'fileName' | 'contentType' | 'base64Data'): string => {
    const value = body[field];
    if (typeof value !== 'string' || value.trim() === '') throw new FieldRuleError(field, `${field} is required.`);
    return value;
  };
  const fileName = required('fileName');
  const contentType = required('contentType');
  const base64 = required('base64Data').replace(/\s+/g, '');
  if (!isStandardBase64(base64)) throw new FieldRuleError('base64Data', 'base64Data must be standard base64.');
  if (body.kind !== undefined && typeof body.kind !== 'string')
    throw new FieldRuleError('kind', 'kind must be image, audio, or file.');
  if (body.messageId !== undefined && typeof body.messageId !== 'string')
    throw new FieldRuleError('messageId', 'messageId must be a string.');
  return {
    fileName,
    contentType,
    bytes: Buffer.from(base64, 'base64'),
    kind: body.kind as string | undefined,
    messageId: body.messageId as string | undefined,
  };
}

/** The body of an upload, either format (checks 1–7). */
export async function readUpload(event: HttpEvent, config: InstanceConfig): Promise<Media.Upload> {
  const contentType = header(event, 'content-type') ?? '';
  return /^multipart\/form-data/i.test(contentType.trim())
    ? fromMultipart(event, contentType, Media.maxUploadBytes(config))
    : fromJson(event);
}

export const schemas = {
  path: chatPath,
  readBody: readUpload,
  replies: { 201: json('The stored media.', MediaRecord), ...uploadRefused },
};

export const handler = http('media/upload', schemas, async ({ path, config, body, deadline }) => ({
  status: 201,
  body: await Media.upload(config, path.chatId, body, deadline),
}));
