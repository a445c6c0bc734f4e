/**
 * Uploads through the API (contract §5.6.2, §8): checks 8–16 in the contract's order, then
 * the bytes (and, for images, the thumbnail made in this request: a file that does not decode
 * as an image never gets a record) go to the bucket, and the record, its chat entry and the
 * `media.attached` event commit in one transaction. A failed upload leaves no object behind.
 * The only module that loads the image library (platform/images.ts).
 */
import { FieldRuleError, NotFoundError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import { env } from '../platform/env.js';
import { isId } from '../platform/ids.js';
import { makeThumbnail, NotAnImageError } from '../platform/images.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import * as Storage from '../platform/media-storage.js';
import { guarded, transact } from '../store/db.js';
import type { TransactWrite } from '../store/db.js';
import { withEvents } from '../store/events-repo.js';
import { EVENTS } from '../model/events.js';
import * as Store from '../store/media-repo.js';
import type { MediaKind, MediaRecord } from '../store/media-repo.js';
import { linkMedia, locate } from '../store/messages-repo.js';
import type { MessageLocation } from '../store/messages-repo.js';
import { existingChat } from './chat-lookup.js';
import { PLATFORM_MAX_UPLOAD_BYTES } from './instance-config.js';
import {
  FILE_CACHE_CONTROL,
  KINDS,
  bareType,
  get as getMedia,
  kindOf,
  normalizeMediaType,
  pendingPath,
  sanitizeFileName,
  servedAs,
  storagePath,
  thumbnailPath,
  typeAllowed,
} from './media.js';
import type { Media } from './media.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';

/** The effective upload cap through the API: the configuration's, within what one request carries (§13 item 1). */
export const maxUploadBytes = (config: InstanceConfig): number =>
  Math.min(config.maxUploadBytes, PLATFORM_MAX_UPLOAD_BYTES);

export interface Upload {
  fileName: string;
  contentType: string;
  bytes: Buffer;
  /** As sent: validated here (check 8). */
  kind?: string | undefined;
  messageId?: string | undefined;
}

/**
 * Names the contract leaves unbounded (docs/architecture.md "Limits"): the file name becomes part of the
 * object key (S3 keys hold 1,024 bytes) and both are stored with the medium and sent as headers.
 */
export const MAX_FILE_NAME_CHARS = 255;
export const MAX_CONTENT_TYPE_CHARS = 255;

/** What the uploader declares, and what checks 8–13 make of it: the kind, and the type to store. */
interface Declared {
  kind: MediaKind;
  /** One media type, normalized (§8.1 [Divergence]): what is stored, presigned and served. */
  contentType: string;
}

/** Checks 8, 9 and 11–13 of §5.6.2 on what the uploader declares. */
function checkDeclared(
  config: InstanceConfig,
  input: { kind?: string | undefined; contentType: string; fileName: string },
  size: number,
  cap: number,
): Declared {
  if (input.fileName.length > MAX_FILE_NAME_CHARS)
    throw new FieldRuleError('fileName', `fileName must be at most ${MAX_FILE_NAME_CHARS} characters.`);
  if (input.contentType.length > MAX_CONTENT_TYPE_CHARS)
    throw new FieldRuleError('contentType', `contentType must be at most ${MAX_CONTENT_TYPE_CHARS} characters.`);
  if (input.kind !== undefined && !KINDS.includes(input.kind as MediaKind))
    throw new FieldRuleError('kind', 'kind must be image, audio, or file.');
  if (input.contentType.trim() === '') throw new FieldRuleError('file', 'file content type is required.');
  if (size === 0) throw new FieldRuleError('file', 'file cannot be empty.');
  if (size > cap)
    throw new PayloadTooLargeError('file exceeds maxUploadBytes.', { field: 'file', maxUploadBytes: cap });
  if (bareType(input.contentType) === 'image/svg+xml') {
    throw new UnsupportedMediaTypeError('SVG uploads are not allowed.', {
      field: 'file',
      contentType: input.contentType,
    });
  }
  // Check 13: what is not exactly one media type (`audio/mpeg;,text/html`, a list, `*/*` with
  // stray text) is allowed by no list (§8.1 [Divergence]) and is refused here, before any
  // storage call that would carry it as a header.
  const contentType = normalizeMediaType(input.contentType);
  if (contentType === undefined || !typeAllowed(contentType, config.allowedMimeTypes)) {
    throw new UnsupportedMediaTypeError('Uploaded file type is not allowed.', {
      field: 'file',
      contentType: input.contentType,
    });
  }
  return { kind: kindOf(input.kind as MediaKind | undefined, input.contentType), contentType };
}

/** Check 14: an image must decode (by its bytes, whatever its name or type says); its thumbnail. */
async function thumbnailOf(kind: MediaKind, bytes: Buffer, contentType: string): Promise<Buffer | undefined> {
  if (kind !== 'image') return undefined;
  try {
    return (await makeThumbnail(bytes)).webp;
  } catch (error) {
    if (!(error instanceof NotAnImageError)) throw error;
    throw new UnsupportedMediaTypeError('file content is not a valid image.', { field: 'file', contentType });
  }
}

/** Checks 15–16: the chat exists, and `messageId` is one of its messages (its location). */
async function checkTargets(chatId: string, messageId: string | undefined): Promise<MessageLocation | undefined> {
  await existingChat(chatId);
  if (messageId === undefined) return undefined;
  const message = isId(messageId) ? await locate(messageId) : undefined;
  if (!message || message.chatId !== chatId)
    throw new FieldRuleError('messageId', 'messageId does not belong to this chat.');
  return message;
}

/** The message a medium is linked to at upload learns its kind, in the upload's transaction. */
const linkWrites = (target: MessageLocation | undefined, media: MediaRecord): TransactWrite[] =>
  target ? [linkMedia(target, media.kind)] : [];

function newRecord(
  chatId: string,
  id: string,
  input: { fileName: string; contentType: string; messageId?: string | undefined },
  size: number,
  kind: MediaKind,
  thumbnail: boolean,
  now: string,
): MediaRecord {
  const fileName = sanitizeFileName(input.fileName);
  return {
    id,
    chat_id: chatId,
    message_id: input.messageId ?? null,
    storage_path: storagePath(chatId, id, fileName),
    thumbnail_path: thumbnail ? thumbnailPath(chatId, id) : null,
    filename: fileName,
    content_type: input.contentType,
    byte_size: size,
    kind,
    created_at: now,
  };
}

/** The headers an original is stored with, so that a presigned download serves them too. */
const originalHeaders = (media: MediaRecord): Storage.ObjectHeaders => ({
  ...servedAs(media.content_type, media.filename),
  cacheControl: FILE_CACHE_CONTROL,
});

/**
 * Stores the thumbnail, runs `storeOriginal`, and commits the record, its chat entry, the
 * `media.attached` event and `extra` items in one transaction. Whatever fails, no object is
 * left behind (§5.6.2).
 */
async function storeAndCommit(
  media: MediaRecord,
  thumbnail: Buffer | undefined,
  storeOriginal: () => Promise<void>,
  extra: TransactWrite[],
  deadline: Deadline,
): Promise<void> {
  const stored: string[] = [];
  try {
    await storeOriginal();
    stored.push(media.storage_path);
    if (thumbnail && media.thumbnail_path) {
      await Storage.putObject(media.thumbnail_path, thumbnail, {
        contentType: 'image/webp',
        cacheControl: FILE_CACHE_CONTROL,
      });
      stored.push(media.thumbnail_path);
    }
    const event = EVENTS.mediaAttached.of({
      chatId: media.chat_id,
      mediaId: media.id,
      messageId: media.message_id,
      kind: media.kind,
    });
    await withEvents([event], media.created_at, (eventItems) =>
      transact([...Store.putMediaWrites(media), ...extra, ...eventItems], deadline),
    );
  } catch (error) {
    await Storage.deleteObjects(stored).catch((cleanup: unknown) =>
      logger.error('media: objects of a failed upload not removed', { mediaId: media.id, error: cleanup }),
    );
    throw error;
  }
}

/** POST /chats/{chatId}/media: checks 8–16 of §5.6.2 in order, then the bytes, thumbnail, record and event. */
export async function upload(
  config: InstanceConfig,
  chatId: string,
  input: Upload,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<Media> {
  const { kind, contentType } = checkDeclared(config, input, input.bytes.length, maxUploadBytes(config));
  const thumbnail = await thumbnailOf(kind, input.bytes, input.contentType);
  const target = await checkTargets(chatId, input.messageId);
  const media = newRecord(
    chatId,
    deps.newId(),
    { ...input, contentType },
    input.bytes.length,
    kind,
    thumbnail !== undefined,
    deps.clock().toISOString(),
  );
  await storeAndCommit(
    media,
    thumbnail,
    () => Storage.putObject(media.storage_path, input.bytes, originalHeaders(media)),
    linkWrites(target, media),
    deadline,
  );
  return media;
}

// ---------------------------------------------------------------------------------------
// Upload sessions: files larger than one request carries (ARCHITECTURE.md "Media")
// ---------------------------------------------------------------------------------------

/** How long a session's presigned POST is valid; the session record and its pending object live a day. */
const SESSION_POST_SECONDS = 15 * 60;
const SESSION_TTL_SECONDS = 24 * 3600;

export interface SessionRequest {
  fileName: string;
  contentType: string;
  byteSize: number;
  kind?: string | undefined;
  messageId?: string | undefined;
}

export interface OpenedSession {
  uploadId: string;
  /** POST the form here: every entry of `fields`, then the file as the last part, named `file`. */
  url: string;
  fields: Record<string, string>;
  expiresAt: string;
  maxUploadBytes: number;
}

const sessionNotFound = (uploadId: string) => new NotFoundError('Upload not found.', { uploadId });

/**
 * POST /chats/{chatId}/media/uploads: the checks an upload makes on what it declares (8–13,
 * 15–16), then a presigned POST for exactly `byteSize` bytes of exactly `contentType`, to a
 * pending key that expires unless finalized.
 */
export async function openSession(
  config: InstanceConfig,
  chatId: string,
  input: SessionRequest,
  pageOrigin?: string,
  deps: Deps = defaultDeps,
): Promise<OpenedSession> {
  const { kind, contentType } = checkDeclared(config, input, input.byteSize, config.maxUploadBytes);
  await checkTargets(chatId, input.messageId);
  const uploadId = deps.newId();
  const now = deps.clock();
  const session: Store.UploadSession = {
    id: uploadId,
    chat_id: chatId,
    file_name: input.fileName,
    content_type: contentType,
    byte_size: input.byteSize,
    kind,
    ...(input.messageId !== undefined ? { message_id: input.messageId } : {}),
    pending_key: pendingPath(chatId, uploadId),
    status: 'open',
    created_at: now.toISOString(),
  };
  await Store.putUploadSession(session, Math.floor(now.getTime() / 1000) + SESSION_TTL_SECONDS);
  const post = await Storage.presignUpload(session.pending_key, contentType, input.byteSize, SESSION_POST_SECONDS);
  // A page of the web app may connect to its own origin only (its CSP): where that origin hands
  // form uploads on to the bucket (MEDIA_UPLOAD_PATH), the page posts there. The policy's
  // signature does not cover the URL, only the bucket, key, type and size.
  const uploadPath = env().MEDIA_UPLOAD_PATH;
  if (pageOrigin && uploadPath) post.url = `${pageOrigin}${uploadPath}`;
  return {
    uploadId,
    ...post,
    expiresAt: new Date(now.getTime() + SESSION_POST_SECONDS * 1000).toISOString(),
    maxUploadBytes: config.maxUploadBytes,
  };
}

/**
 * POST /chats/{chatId}/media/uploads/{uploadId}/complete: verifies the stored object as an
 * upload verifies its body (size, type, an image decodes), makes the thumbnail, moves the
 * object to its storage path and commits the record once; a finalized session answers its
 * media again. A file that fails a check is deleted, and the session stays open for a retry.
 */
export async function finalize(
  config: InstanceConfig,
  chatId: string,
  uploadId: string,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<Media> {
  const session = isId(uploadId) ? await Store.getUploadSession(uploadId) : undefined;
  if (!session || session.chat_id !== chatId) throw sessionNotFound(uploadId);
  if (session.status === 'done' && session.media_id) return getMedia(session.media_id);
  const head = await Storage.headObject(session.pending_key);
  if (!head) throw new FieldRuleError('file', 'The file has not been uploaded yet.');
  const refuse = async (error: Error): Promise<never> => {
    await Storage.deleteObjects([session.pending_key]).catch((cleanup: unknown) =>
      logger.warn('media: refused upload not removed', { uploadId, error: cleanup }),
    );
    throw error;
  };
  if (head.size > config.maxUploadBytes)
    await refuse(
      new PayloadTooLargeError('file exceeds maxUploadBytes.', {
        field: 'file',
        maxUploadBytes: config.maxUploadBytes,
      }),
    );
  if (head.size !== session.byte_size) {
    await refuse(
      new FieldRuleError('file', 'The uploaded file does not have the declared byteSize.', {
        byteSize: session.byte_size,
        uploadedBytes: head.size,
      }),
    );
  }
  if (head.contentType !== session.content_type) {
    await refuse(
      new UnsupportedMediaTypeError('The uploaded file does not have the declared contentType.', {
        field: 'file',
        contentType: head.contentType ?? null,
      }),
    );
  }
  let thumbnail: Buffer | undefined;
  if (session.kind === 'image') {
    const stored = await Storage.getObject(session.pending_key);
    if (!stored) throw new FieldRuleError('file', 'The file has not been uploaded yet.');
    thumbnail = await thumbnailOf('image', stored.bytes, session.content_type).catch(refuse);
  }
  const media = newRecord(
    chatId,
    deps.newId(),
    { fileName: session.file_name, contentType: session.content_type, messageId: session.message_id },
    head.size,
    session.kind,
    thumbnail !== undefined,
    deps.clock().toISOString(),
  );
  // The session checked its message at creation; a message is never deleted or moved.
  const target = session.message_id ? await locate(session.message_id) : undefined;
  try {
    await storeAndCommit(
      media,
      thumbnail,
      () => Storage.copyObject(session.pending_key, media.storage_path, originalHeaders(media)),
      [guarded(Store.finishUploadSession(uploadId, media.id), () => new SessionTaken()), ...linkWrites(target, media)],
      deadline,
    );
  } catch (error) {
    // Finalized meanwhile by a concurrent request: that one's media is the answer.
    if (!(error instanceof SessionTaken)) throw error;
    const done = await Store.getUploadSession(uploadId);
    if (done?.media_id) return getMedia(done.media_id);
    throw error;
  }
  await Storage.deleteObjects([session.pending_key]).catch((error: unknown) =>
    logger.warn('media: pending upload not removed', { uploadId, error }),
  );
  return media;
}

class SessionTaken extends Error {}
