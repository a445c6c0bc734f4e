/**
 * Media (contract §2.4, §5.6, §8): names, kinds and types, listing, metadata, deletion and
 * downloads with byte ranges. Bytes live in the media bucket (platform/media-storage.ts),
 * records in the table (store/media-repo.ts). Uploads are in core/media-upload.ts, the one
 * module that loads the image library (so no other function bundles it).
 */
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import { isId } from '../platform/ids.js';
import { logger } from '../platform/logger.js';
import * as Storage from '../platform/media-storage.js';
import { encodeCursor, sortKeyAfter } from '../store/cursor.js';
import * as Store from '../store/media-repo.js';
import type { MediaKind, MediaRecord } from '../store/media-repo.js';
import { existingChat } from './chat-lookup.js';
import type { Page } from './chat-reads.js';

export type Media = MediaRecord;

export const KINDS: readonly MediaKind[] = ['image', 'audio', 'file'];
const mediaNotFound = (mediaId: string) => NotFoundError.of('mediaId', mediaId, 'Media not found.');

// ---------------------------------------------------------------------------------------
// Names, kinds and types (§8.1–8.3)
// ---------------------------------------------------------------------------------------

/** §8.3: trimmed, `upload.bin` when empty, every character outside [A-Za-z0-9._-] replaced by `_`. */
export function sanitizeFileName(name: string): string {
  const trimmed = name.trim();
  return (trimmed === '' ? 'upload.bin' : trimmed).replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The sanitized name's extension including the dot, or `.bin`. */
function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 && dot < fileName.length - 1 ? fileName.slice(dot) : '.bin';
}

export const storagePath = (chatId: string, mediaId: string, fileName: string) =>
  `uploads/${chatId}/${mediaId}${extensionOf(fileName)}`;
export const thumbnailPath = (chatId: string, mediaId: string) => `uploads/${chatId}/thumbnails/${mediaId}.webp`;
/** Where an upload session's file waits until it is finalized (expired by the bucket's lifecycle otherwise). */
export const pendingPath = (chatId: string, uploadId: string) => `pending/${chatId}/${uploadId}`;

/** Lower-cased, parameters stripped. */
export const bareType = (contentType: string) => contentType.split(';')[0]!.trim().toLowerCase();

/** An RFC 9110 token: what a media type's type and subtype, and a parameter's name, are made of. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A quoted-string (RFC 9110 §5.6.4): visible ASCII and spaces, `\\` escaping one character. */
const QUOTED = '"(?:[\\t\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*"';
const PARAMETER = `;[ \\t]*(${TOKEN})=(${TOKEN}|${QUOTED})`;
/**
 * Exactly one media type (RFC 9110 §8.3.1): `type/subtype`, then parameters (empty ones too),
 * and nothing else: no list, no stray text. Each part's whitespace has one place to go, so
 * a failing match does not backtrack over the ways to split it.
 */
const MEDIA_TYPE = new RegExp(
  `^[ \\t]*(${TOKEN})/(${TOKEN})[ \\t]*((?:;[ \\t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED})[ \\t]*)?)*)$`,
);
const PARAMETERS = new RegExp(PARAMETER, 'g');

/**
 * §8.1 [Divergence]: the declared type parsed as exactly one media type, normalized: the
 * lower-cased `type/subtype`, plus `charset` (lower-cased) for `text/*` types only; every other
 * parameter is dropped. Undefined for anything that is not one media type (`audio/mpeg;,text/html`,
 * `text/html, image/png`, `x y`, a parameter without a value), which is served nowhere as sent.
 */
export function normalizeMediaType(contentType: string): string | undefined {
  const m = MEDIA_TYPE.exec(contentType);
  if (!m) return undefined;
  const type = `${m[1]}/${m[2]}`.toLowerCase();
  if (!type.startsWith('text/')) return type;
  let charset: string | undefined;
  for (const [, name, raw] of (m[3] ?? '').matchAll(PARAMETERS)) {
    if (name!.toLowerCase() !== 'charset') continue;
    const value = raw!.startsWith('"') ? raw!.slice(1, -1).replace(/\\(.)/g, '$1') : raw!;
    // A charset is a token; a quoted value that is not one is dropped, not passed on.
    if (new RegExp(`^${TOKEN}$`).test(value)) charset = value.toLowerCase();
  }
  return charset ? `${type}; charset=${charset}` : type;
}

/** §8.2: an explicit kind wins; otherwise by the type's prefix, as supplied. */
export function kindOf(declared: MediaKind | undefined, contentType: string): MediaKind {
  if (declared) return declared;
  if (contentType.startsWith('image/')) return 'image';
  if (contentType.startsWith('audio/')) return 'audio';
  return 'file';
}

/** §8.1: `*\/*`, an exact entry, or a `type/*` entry; compared lower-cased without parameters. */
export function typeAllowed(contentType: string, allowed: readonly string[]): boolean {
  const type = bareType(contentType);
  return allowed.some((entry) => {
    const e = bareType(entry);
    if (e === '*/*') return true;
    if (e.endsWith('/*')) return type.startsWith(e.slice(0, -1));
    return e === type;
  });
}

// ---------------------------------------------------------------------------------------
// Reads and deletion (§5.6.1, §5.6.3, §5.6.4)
// ---------------------------------------------------------------------------------------

export interface MediaListQuery {
  kind?: MediaKind | undefined;
  messageId?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** GET /chats/{chatId}/media: newest first (created_at, then id, both descending). */
export async function list(chatId: string, q: MediaListQuery): Promise<Page<Media>> {
  const listName = `media:${chatId}:${q.kind ?? ''}:${q.messageId ?? ''}`;
  const afterSk = await sortKeyAfter(listName, q.cursor);
  await existingChat(chatId);
  const page = await Store.listMedia(chatId, { kind: q.kind, messageId: q.messageId, limit: q.limit, afterSk });
  const next = page.lastSk ? await encodeCursor(listName, { s: page.lastSk }) : null;
  return { data: page.media, cursor: { next, hasMore: next !== null } };
}

export async function get(mediaId: string): Promise<Media> {
  const media = isId(mediaId) ? await Store.getOneMedia(mediaId) : undefined;
  if (!media) throw mediaNotFound(mediaId);
  return media;
}

/** DELETE /media/{mediaId}: the record as it was; its objects are removed best-effort. */
export async function remove(mediaId: string, deadline: Deadline): Promise<Media> {
  const media = await get(mediaId);
  const attached = () => new ConflictError('Cannot delete media that is attached to a message.', { mediaId });
  if (media.message_id) throw attached();
  try {
    await Store.deleteMedia(media, deadline);
  } catch (error) {
    if (error instanceof Store.MediaAttached) {
      // Linked meanwhile, or deleted by a concurrent request.
      if (await Store.getOneMedia(mediaId)) throw attached();
      throw mediaNotFound(mediaId);
    }
    throw error;
  }
  const keys = [media.storage_path, ...(media.thumbnail_path ? [media.thumbnail_path] : [])];
  await Storage.deleteObjects(keys).catch((error: unknown) =>
    logger.warn('media: stored objects not removed', { mediaId, error }),
  );
  return media;
}

// ---------------------------------------------------------------------------------------
// Downloads (§5.6.5, §5.6.6)
// ---------------------------------------------------------------------------------------

interface Served<S extends number> {
  status: S;
  headers: Record<string, string>;
  body: Buffer;
}
/** The bytes, or without a body: a redirect to a presigned URL (307), a range beyond the file (416). */
export type Download = Served<200 | 206> | { status: 307 | 416; headers: Record<string, string>; body?: undefined };

export const FILE_CACHE_CONTROL = 'private, max-age=86400';
/**
 * Larger originals are not streamed by the function (a Lambda response is at most 6 MB, and
 * binary bodies travel base64, ×4/3): they answer 307 to a presigned URL valid this long,
 * whose object carries the same Content-Type, Content-Disposition and Cache-Control (§13 item 2).
 */
export const INLINE_DOWNLOAD_MAX_BYTES = 4_194_304;
const REDIRECT_SECONDS = 300;
const INLINE_IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/**
 * §5.6.5: a download is a document of the app's origin when a browser opens it, so it may run
 * nothing, load nothing, submit nothing and be framed nowhere: `sandbox` gives it an opaque
 * origin (no cookie, no same-origin request) whatever its type turns out to be.
 */
export const FILE_CSP =
  "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; " +
  "form-action 'none'; sandbox";
export const OCTET_STREAM = 'application/octet-stream';

/**
 * What a download is served as: the stored type normalized again (media stored before types
 * were normalized at upload may hold anything), or `application/octet-stream` as an attachment
 * when it is not one media type; inline only for the image types a browser shows as images,
 * audio and video (§5.6.5; PDF and SVG are attachments). The name is re-sanitized (§8.3).
 */
export function servedAs(storedType: string, fileName: string): { contentType: string; contentDisposition: string } {
  const type = normalizeMediaType(storedType);
  const inline =
    type !== undefined && (INLINE_IMAGE_TYPES.has(type) || type.startsWith('audio/') || type.startsWith('video/'));
  return {
    contentType: type ?? OCTET_STREAM,
    contentDisposition: `${inline ? 'inline' : 'attachment'}; filename="${sanitizeFileName(fileName)}"`,
  };
}

/** The one byte range of a `Range` header, per §5.6.5; 'unsatisfiable' for S ≥ size. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (header === undefined) return undefined;
  if (header.includes(',')) throw new ValidationError('Only a single byte range is supported.');
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) throw new ValidationError('Invalid Range header.');
  if (m[1] === '') {
    const n = Number(m[2]);
    if (!Number.isSafeInteger(n) || n <= 0) throw new ValidationError('Invalid Range header.');
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? undefined : Number(m[2]);
  if (!Number.isSafeInteger(start) || (end !== undefined && (!Number.isSafeInteger(end) || start > end)))
    throw new ValidationError('Invalid Range header.');
  if (start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end ?? size - 1, size - 1) };
}

/** GET /files/{mediaId}: the original, whole or one byte range. */
export async function download(mediaId: string, rangeHeader: string | undefined): Promise<Download> {
  const media = await get(mediaId);
  const served = servedAs(media.content_type, media.filename);
  const headers: Record<string, string> = {
    'content-type': served.contentType,
    'content-disposition': served.contentDisposition,
    'content-security-policy': FILE_CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': FILE_CACHE_CONTROL,
    'accept-ranges': 'bytes',
  };
  const range = parseRange(rangeHeader, media.byte_size);
  if (media.byte_size > INLINE_DOWNLOAD_MAX_BYTES) {
    // Checked (auth, existence, a valid Range) before redirecting; storage answers the range itself.
    const url = await Storage.presignDownload(
      media.storage_path,
      { ...served, cacheControl: FILE_CACHE_CONTROL },
      REDIRECT_SECONDS,
    );
    return {
      status: 307,
      headers: {
        location: url,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-security-policy': FILE_CSP,
        'content-length': '0',
      },
    };
  }
  if (range === 'unsatisfiable') {
    return {
      status: 416,
      headers: { ...headers, 'content-range': `bytes */${media.byte_size}`, 'content-length': '0' },
    };
  }
  const stored = await Storage.getObject(media.storage_path, range);
  if (!stored) throw NotFoundError.of('mediaId', mediaId, 'Media file not found on disk.');
  headers['content-length'] = String(stored.bytes.length);
  if (!range) return { status: 200, headers, body: stored.bytes };
  return {
    status: 206,
    headers: { ...headers, 'content-range': `bytes ${range.start}-${range.end}/${stored.size}` },
    body: stored.bytes,
  };
}

/** GET /files/{mediaId}/thumbnail. */
export async function thumbnail(mediaId: string): Promise<Served<200>> {
  const media = await get(mediaId);
  if (media.kind !== 'image' || !media.thumbnail_path)
    throw NotFoundError.of('mediaId', mediaId, 'Thumbnail not found.');
  const stored = await Storage.getObject(media.thumbnail_path);
  if (!stored) throw NotFoundError.of('mediaId', mediaId, 'Thumbnail file not found on disk.');
  return {
    status: 200,
    headers: {
      'content-type': 'image/webp',
      'content-disposition': `inline; filename="${mediaId}-thumbnail.webp"`,
      'content-length': String(stored.bytes.length),
      'cache-control': FILE_CACHE_CONTROL,
      'x-content-type-options': 'nosniff',
      'content-security-policy': FILE_CSP,
    },
    body: stored.bytes,
  };
}
