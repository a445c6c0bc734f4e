/**
 * Uploads through the API (contract §5.6.2, §8): checks 8–16 in the contract's order, then
 * the bytes (and, for images, the thumbnail made in this request: a file that does not decode
 * as an image never gets a record) go to the bucket, and the record, its chat entry and the
 * `media.attached` event commit in one transaction. A failed upload leaves no object behind.
 * The only module that loads the image library (platform/images.ts).
 */
import { FieldRuleError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js';
import { isId, newId } from '../platform/ids.js';
import { makeThumbnail, NotAnImageError } from '../platform/images.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import * as Storage from '../platform/media-storage.js';
import { transact } from '../store/db.js';
import { withEvents } from '../store/events-repo.js';
import * as Store from '../store/media-repo.js';
import type { MediaKind, MediaRecord } from '../store/media-repo.js';
import { locate } from '../store/messages-repo.js';
import { existingChat } from './chats.js';
import { PLATFORM_MAX_UPLOAD_BYTES } from './config.js';
import { KINDS, bareType, kindOf, sanitizeFileName, storagePath, thumbnailPath, typeAllowed } from './media.js';
import type { Media } from './media.js';

export interface MediaDeps {
  clock: () => Date;
  newId: () => string;
}
export const defaultDeps: MediaDeps = { clock: () => new Date(), newId };

/** The effective upload cap through the API: the configuration's, within what one request carries (§13 item 1). */
export const maxUploadBytes = (config: InstanceConfig): number => Math.min(config.maxUploadBytes, PLATFORM_MAX_UPLOAD_BYTES);

export interface Upload {
  fileName: string;
  contentType: string;
  bytes: Buffer;
  /** As sent: validated here (check 8). */
  kind?: string | undefined;
  messageId?: string | undefined;
}

/** Checks 8–16 of §5.6.2 in order, then stores the bytes (and thumbnail) and commits the record with its event. */
export async function upload(config: InstanceConfig, chatId: string, input: Upload, deps: MediaDeps = defaultDeps): Promise<Media> {
  if (input.kind !== undefined && !KINDS.includes(input.kind as MediaKind)) throw new FieldRuleError('kind', 'kind must be image, audio, or file.');
  const declaredKind = input.kind as MediaKind | undefined;
  if (input.contentType.trim() === '') throw new FieldRuleError('file', 'file content type is required.');
  if (input.bytes.length === 0) throw new FieldRuleError('file', 'file cannot be empty.');
  const cap = maxUploadBytes(config);
  if (input.bytes.length > cap) throw new PayloadTooLargeError('file exceeds maxUploadBytes.', { field: 'file', maxUploadBytes: cap });
  if (bareType(input.contentType) === 'image/svg+xml') {
    throw new UnsupportedMediaTypeError('SVG uploads are not allowed.', { field: 'file', contentType: input.contentType });
  }
  if (!typeAllowed(input.contentType, config.allowedMimeTypes)) {
    throw new UnsupportedMediaTypeError('Uploaded file type is not allowed.', { field: 'file', contentType: input.contentType });
  }
  const kind = kindOf(declaredKind, input.contentType);
  let thumbnail: Buffer | undefined;
  if (kind === 'image') {
    try {
      thumbnail = (await makeThumbnail(input.bytes)).webp;
    } catch (error) {
      if (!(error instanceof NotAnImageError)) throw error;
      throw new UnsupportedMediaTypeError('file content is not a valid image.', { field: 'file', contentType: input.contentType });
    }
  }
  await existingChat(chatId);
  if (input.messageId !== undefined) {
    const message = isId(input.messageId) ? await locate(input.messageId) : undefined;
    if (!message || message.chatId !== chatId) throw new FieldRuleError('messageId', 'messageId does not belong to this chat.');
  }

  const id = deps.newId();
  const fileName = sanitizeFileName(input.fileName);
  const now = deps.clock().toISOString();
  const media: MediaRecord = {
    id,
    chat_id: chatId,
    message_id: input.messageId ?? null,
    storage_path: storagePath(chatId, id, fileName),
    thumbnail_path: thumbnail ? thumbnailPath(chatId, id) : null,
    filename: fileName,
    content_type: input.contentType,
    byte_size: input.bytes.length,
    kind,
    created_at: now,
  };
  const stored: string[] = [];
  try {
    await Storage.putObject(media.storage_path, input.bytes, input.contentType);
    stored.push(media.storage_path);
    if (thumbnail && media.thumbnail_path) {
      await Storage.putObject(media.thumbnail_path, thumbnail, 'image/webp');
      stored.push(media.thumbnail_path);
    }
    const event = { type: 'media.attached' as const, payload: { chatId, mediaId: id, messageId: media.message_id, kind } };
    await withEvents([event], now, (eventItems) => transact([...Store.putMediaWrites(media), ...eventItems]));
  } catch (error) {
    // Nothing is left behind by a failed upload (§5.6.2).
    await Storage.deleteObjects(stored).catch((cleanup: unknown) => logger.error('media: objects of a failed upload not removed', { mediaId: id, error: cleanup }));
    throw error;
  }
  return media;
}

