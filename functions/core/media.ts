/**
 * Media (contract §2.4, §5.6, §8): names, kinds and types, listing, metadata, deletion and
 * downloads with byte ranges. Bytes live in the media bucket (platform/media-storage.ts),
 * records in the table (store/media-repo.ts). Uploads are in core/media-upload.ts, the one
 * module that loads the image library (so no other function bundles it).
 */
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
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

/** An RFC 9110 token: what a media type's type and subtype are made of. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const TYPE_SUBTYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);

/**
 * A media type: `type/subtype` (tokens) before any parameters, in a value that can be sent as a
 * header (visible ASCII, spaces and tabs): the stored type is stored with the object and served
 * verbatim as Content-Type (§5.6.5). `text`, `x y`, a NUL or a lone surrogate are not.
 */
export const isMediaType = (contentType: string): boolean =>
  TYPE_SUBTYPE.test(bareType(contentType)) && /^[\t\x20-\x7e]*$/.test(contentType);

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
export async function remove(mediaId: string): Promise<Media> {
  const media = await get(mediaId);
  const attached = () => new ConflictError('Cannot delete media that is attached to a message.', { mediaId });
  if (media.message_id) throw attached();
  try {
    await Store.deleteMedia(media);
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

export interface Download {
  status: 200 | 206 | 307 | 416;
  headers: Record<string, string>;
  body: Buffer;
}

export const FILE_CACHE_CONTROL = 'private, max-age=86400';
/**
 * Larger originals are not streamed by the function (a Lambda response is at most 6 MB, and
 * binary bodies travel base64, ×4/3): they answer 307 to a presigned URL valid this long,
 * whose object carries the same Content-Type, Content-Disposition and Cache-Control (§13 item 2).
 */
export const INLINE_DOWNLOAD_MAX_BYTES = 4_194_304;
const REDIRECT_SECONDS = 300;
const INLINE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'application/pdf']);
const FILE_CSP = "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

export function dispositionOf(contentType: string, fileName: string): string {
  const type = bareType(contentType);
  const inline = INLINE_TYPES.has(type) || type.startsWith('audio/') || type.startsWith('video/');
  return `${inline ? 'inline' : 'attachment'}; filename="${fileName.replace(/["\\]/g, '_')}"`;
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
  const headers: Record<string, string> = {
    'content-type': media.content_type,
    'content-disposition': dispositionOf(media.content_type, media.filename),
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
      {
        contentType: media.content_type,
        contentDisposition: headers['content-disposition']!,
        cacheControl: FILE_CACHE_CONTROL,
      },
      REDIRECT_SECONDS,
    );
    return {
      status: 307,
      headers: {
        location: url,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'content-length': '0',
      },
      body: Buffer.alloc(0),
    };
  }
  if (range === 'unsatisfiable') {
    return {
      status: 416,
      headers: { ...headers, 'content-range': `bytes */${media.byte_size}`, 'content-length': '0' },
      body: Buffer.alloc(0),
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
export async function thumbnail(mediaId: string): Promise<Download> {
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
      'cache-control': 'private, max-age=86400',
      'x-content-type-options': 'nosniff',
    },
    body: stored.bytes,
  };
}
