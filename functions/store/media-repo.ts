/**
 * Media metadata (contract §2.4): the record (MEDIA#<id>/MEDIA, found by id, updated when a
 * message links it) and a small entry in its chat's partition (CHAT#<chatId>/MEDIA#<ms>#<id>,
 * id and kind only) so a chat's media list is one strongly consistent query; the list reads
 * the records themselves for their current `message_id`. Both are written and deleted together.
 */
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../platform/deadline.js';
import { UNPROCESSED_BATCH, ddb, getMany, guarded, putNew, tableName, transact } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';
import { MEDIA_FIELDS, pick } from '../model.js';
import type { Media, MediaKind } from '../model.js';

export type { MediaKind };
export type MediaRecord = Media;

/** The record and its chat entry, for the upload's transaction (with its event). */
export function putMediaWrites(media: MediaRecord): TransactItem[] {
  return [
    putNew({ ...Keys.media(media.id), type: 'media', ...media }),
    putNew({
      ...Keys.mediaEntry(media.chat_id, media.created_at, media.id),
      type: 'media-entry',
      id: media.id,
      kind: media.kind,
    }),
  ];
}

export async function getOneMedia(mediaId: string): Promise<MediaRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.media(mediaId), ConsistentRead: true }),
  );
  return out.Item ? toRecord(out.Item) : undefined;
}

const toRecord = (item: Record<string, unknown>): MediaRecord => pick<Media>(item, MEDIA_FIELDS);

/** Thrown by `deleteMedia` when a message linked the medium meanwhile. */
export class MediaAttached extends Error {}

/** Deletes the record and its chat entry, only while the medium is unattached. */
export async function deleteMedia(media: MediaRecord, deadline: Deadline): Promise<void> {
  await transact(
    [
      guarded(
        {
          Delete: {
            TableName: tableName(),
            Key: Keys.media(media.id),
            ConditionExpression:
              'attribute_exists(pk) AND (attribute_not_exists(message_id) OR attribute_type(message_id, :nullType))',
            ExpressionAttributeValues: { ':nullType': 'NULL' },
          },
        },
        () => new MediaAttached(),
      ),
      { Delete: { TableName: tableName(), Key: Keys.mediaEntry(media.chat_id, media.created_at, media.id) } },
    ],
    deadline,
  );
}

export interface MediaPage {
  media: MediaRecord[];
  /** The sort key of the last entry read, when more may follow. */
  lastSk: string | undefined;
}

/**
 * A page of a chat's media, newest first, optionally filtered by kind and attached message.
 * Reads entries (strongly consistent) after `afterSk` until `limit` records pass the filters.
 */
export async function listMedia(
  chatId: string,
  q: { kind?: MediaKind | undefined; messageId?: string | undefined; limit: number; afterSk?: string | undefined },
): Promise<MediaPage> {
  const { pk, skPrefix } = Keys.mediaEntriesOf(chatId);
  const out: MediaRecord[] = [];
  let start: Record<string, unknown> | undefined = q.afterSk ? { pk, sk: q.afterSk } : undefined;
  let lastSk: string | undefined;
  for (;;) {
    const page = await ddb().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ...(q.kind ? { FilterExpression: 'kind = :kind' } : {}),
        ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ...(q.kind ? { ':kind': q.kind } : {}) },
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: q.limit + 1,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    const entries = page.Items ?? [];
    const records = await getMedia(entries.map((e) => String(e.id)));
    for (const entry of entries) {
      const record = records.get(String(entry.id));
      if (!record || (q.messageId !== undefined && record.message_id !== q.messageId)) continue;
      if (out.length === q.limit) return { media: out, lastSk };
      out.push(record);
      lastSk = String(entry.sk);
    }
    if (!page.LastEvaluatedKey) return { media: out, lastSk: undefined };
    start = page.LastEvaluatedKey;
  }
}

/** The media items that exist among `ids` (BatchGetItem, strongly consistent; up to 100 per call). */
export async function getMedia(ids: readonly string[]): Promise<Map<string, MediaRecord>> {
  const keys = [...new Set(ids)].map((id) => Keys.media(id));
  const items = await getMany(keys, { ConsistentRead: true }, UNPROCESSED_BATCH);
  return new Map(items.map((item) => [String(item.id), toRecord(item)]));
}

/** Links a medium to a message, only if it is still in `chatId` and unattached. */
export const linkMedia = (mediaId: string, chatId: string, messageId: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.media(mediaId),
    UpdateExpression: 'SET message_id = :message',
    ConditionExpression:
      'chat_id = :chat AND (attribute_not_exists(message_id) OR attribute_type(message_id, :nullType))',
    ExpressionAttributeValues: { ':message': messageId, ':chat': chatId, ':nullType': 'NULL' },
  },
});

/** An upload session: a presigned POST for one file, finalized into a medium (once). */
export interface UploadSession {
  id: string;
  chat_id: string;
  file_name: string;
  content_type: string;
  byte_size: number;
  kind: MediaKind;
  message_id?: string;
  pending_key: string;
  status: 'open' | 'done';
  media_id?: string;
  created_at: string;
}

export async function putUploadSession(session: UploadSession, ttlEpochSeconds: number): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...Keys.uploadSession(session.id), type: 'upload-session', ...session, ttl: ttlEpochSeconds },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function getUploadSession(uploadId: string): Promise<UploadSession | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.uploadSession(uploadId), ConsistentRead: true }),
  );
  return out.Item as UploadSession | undefined;
}

/** The session's side of a finalize, for the media record's transaction: open → done, once. */
export const finishUploadSession = (uploadId: string, mediaId: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.uploadSession(uploadId),
    UpdateExpression: 'SET #status = :done, media_id = :media',
    ConditionExpression: '#status = :open',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':done': 'done', ':open': 'open', ':media': mediaId },
  },
});
