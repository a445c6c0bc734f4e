/**
 * Message storage.
 *
 * - A message lives in its chat's partition (CHAT#<chatId>, sorted by creation time), so a
 *   chat's message list is one strongly consistent Query. A small pointer item
 *   (MSG#<id>/PTR), written in the same transaction, finds it by id alone.
 * - While a message streams, each chunk is its own small item in the pointer's partition
 *   (MSG#<id>/CHUNK#<seq>), numbered by an atomic counter on the message item. Appending
 *   therefore costs the same at chunk 1 and chunk 2,000; the text is assembled on read and
 *   written into the message item once, on complete or cancel.
 * - An open-stream marker (CHAT#<chatId>/STREAM#<id>) exists while the message streams, so
 *   cancel-streaming reads a chat's open streams without reading its history.
 *
 * Here: the items, their reads by id and their writes. The reads of many items (a chat's page,
 * a stream's chunks, its open streams) are in message-queries-repo.ts.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { MESSAGE_FIELDS, pick } from '../model.js';
import type { Message } from '../model.js';
import type { Deadline } from '../platform/deadline.js';
import { ddb, guarded, putIf, putNew, tableName, transact, updateIf } from './db.js';
import type { GuardedItem, TransactItem, TransactWrite } from './db.js';
import { Keys } from './keys.js';
import { storable } from './storable.js';

/** The stored item: the API fields plus streaming and listing bookkeeping. */
export interface MessageRecord extends Message {
  /** Chunk numbers handed out so far (streaming messages). */
  chunk_count?: number;
  /** UTF-8 bytes of text streamed so far; bounds the final item size. */
  content_bytes?: number;
  /** `Voice note` or `Attachment`: the label at creation, from the first linked medium (§3.1). */
  media_preview?: string;
  /**
   * The kinds of all the media linked to it, at creation or later (an upload with its
   * `messageId`): `audio` when every one is audio, else `other`; absent when none. The full
   * recompute's preview label (§3.1, §3.3), and what keeps a cancelled message listed (§5.4.2).
   */
  linked_media?: 'audio' | 'other';
  /** Set on a cancelled message with no text and no media: omitted from listings (§5.4.2). */
  list_hidden?: boolean;
}

/** Where a message item lives; immutable, so callers may cache it. */
export interface MessageLocation {
  chatId: string;
  sk: string;
}

/**
 * Chunks stay readable for a week after they are written: long after any stream ends (the
 * final text is copied into the message item then), and TTL deletion costs nothing.
 */
const CHUNK_TTL_SECONDS = 7 * 24 * 3600;

export const toMessage = (item: object): Message => pick<Message>(item, MESSAGE_FIELDS);

export function messageLocation(message: Pick<Message, 'chat_id' | 'created_at' | 'id'>): MessageLocation {
  return { chatId: message.chat_id, sk: Keys.message(message.chat_id, message.created_at, message.id).sk };
}

export const messageKey = (loc: MessageLocation) => ({ pk: Keys.chat(loc.chatId).pk, sk: loc.sk });

/** What linking media of these kinds makes of a message's `linked_media`. */
export const linkedMediaOf = (kinds: readonly string[]): MessageRecord['linked_media'] =>
  kinds.length === 0 ? undefined : kinds.every((kind) => kind === 'audio') ? 'audio' : 'other';

/** Whether media is linked to the message (either record of it: older messages have only the label). */
export const hasLinkedMedia = (message: Pick<MessageRecord, 'linked_media' | 'media_preview'>): boolean =>
  message.linked_media !== undefined || message.media_preview !== undefined;

/**
 * Links one more medium to an existing message (an upload with `messageId`, in the upload's
 * transaction): audio keeps an all-audio message so, any other kind makes it `other`, and a
 * cancelled message that was hidden for having nothing to show is listed again (§5.4.2).
 */
export function linkMedia(loc: MessageLocation, kind: string): TransactWrite {
  return {
    Update: {
      TableName: tableName(),
      Key: messageKey(loc),
      UpdateExpression:
        kind === 'audio'
          ? 'SET linked_media = if_not_exists(linked_media, :kind) REMOVE list_hidden'
          : 'SET linked_media = :kind REMOVE list_hidden',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':kind': linkedMediaOf([kind]) },
    },
  };
}

/** The puts of a new message: the item, its pointer and, when it streams, its open-stream marker. */
export function putMessage(message: MessageRecord): TransactItem[] {
  const key = Keys.message(message.chat_id, message.created_at, message.id);
  const streaming = message.stream_state === 'streaming';
  const items: TransactItem[] = [
    putNew({
      ...key,
      type: 'message',
      ...message,
      trace: storable(message.trace),
      ...(streaming ? { chunk_count: 0, content_bytes: 0 } : {}),
    }),
    putNew({
      ...Keys.messagePointer(message.id),
      type: 'message-pointer',
      chat_id: message.chat_id,
      message_sk: key.sk,
    }),
  ];
  if (streaming) {
    items.push({
      Put: {
        TableName: tableName(),
        Item: { ...Keys.openStream(message.chat_id, message.id), type: 'open-stream', message_sk: key.sk },
      },
    });
  }
  return items;
}

/** Finds a message's item by id through its pointer. One strongly consistent GetItem. */
export async function locate(messageId: string): Promise<MessageLocation | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.messagePointer(messageId), ConsistentRead: true }),
  );
  if (!out.Item) return undefined;
  return { chatId: String(out.Item.chat_id), sk: String(out.Item.message_sk) };
}

/** A message's chat and creation time (epoch ms), from its pointer; undefined when it does not exist. */
export async function messageOrigin(messageId: string): Promise<{ chatId: string; createdMs: number } | undefined> {
  const loc = await locate(messageId);
  return loc && { chatId: loc.chatId, createdMs: Keys.createdMsOf(loc.sk) };
}

export async function getMessage(loc: MessageLocation): Promise<MessageRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: messageKey(loc), ConsistentRead: true }));
  return out.Item as MessageRecord | undefined;
}

export type ReserveOutcome =
  | {
      ok: true;
      seq: number;
      /** The message as the reservation left it. */
      message: MessageRecord;
      /** The message's updated_at before this reservation (its previous chunk, or its creation). */
      previousUpdatedAt: string;
    }
  | { ok: false; message: MessageRecord | undefined };

/**
 * Reserves the next chunk number of a streaming message and bumps its updated_at, in one
 * conditional UpdateItem: it succeeds only while the message streams, has had activity after
 * `idleCutoff` (not overdue) and stays within `maxBytes` once `bytes` are added. On failure,
 * the message as it was (or undefined) tells the caller why. The item comes back as it was
 * (ALL_OLD, the same read size as ALL_NEW) so the caller also learns the previous activity.
 */
export async function reserveChunk(
  loc: MessageLocation,
  args: { now: string; idleCutoff: string; bytes: number; maxBytes: number },
): Promise<ReserveOutcome> {
  const reserved = await updateIf({
    Key: messageKey(loc),
    UpdateExpression: 'SET updated_at = :now ADD chunk_count :one, content_bytes :bytes',
    ConditionExpression: 'stream_state = :streaming AND updated_at > :cutoff AND content_bytes <= :room',
    ExpressionAttributeValues: {
      ':now': args.now,
      ':one': 1,
      ':bytes': args.bytes,
      ':streaming': 'streaming',
      ':cutoff': args.idleCutoff,
      ':room': args.maxBytes - args.bytes,
    },
    ReturnValues: 'ALL_OLD',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (!reserved.ok) return { ok: false, message: reserved.old as MessageRecord | undefined };
  const old = reserved.item as unknown as MessageRecord;
  // What the update expression above made of it.
  const message: MessageRecord = {
    ...old,
    updated_at: args.now,
    chunk_count: Number(old.chunk_count ?? 0) + 1,
    content_bytes: Number(old.content_bytes ?? 0) + args.bytes,
  };
  return { ok: true, seq: message.chunk_count!, message, previousUpdatedAt: old.updated_at };
}

/**
 * The put of chunk `seq`. It fails if the number was voided: a complete, cancel or timeout
 * that could not wait for it any longer wrote a tombstone there, so a chunk numbered just
 * before the stream ended is refused (409) rather than left out of a final text already written.
 * A single-item conditional put: no transaction needed (see putChunk).
 */
export function chunkWrite(messageId: string, seq: number, text: string, now: string): TransactItem {
  return putNew({
    ...Keys.chunk(messageId, seq),
    type: 'chunk',
    seq,
    text,
    ttl: Math.floor(Date.parse(now) / 1000) + CHUNK_TTL_SECONDS,
  });
}

/**
 * Writes chunk `seq` on its own (a conditional PutItem, 1 WRU for a chunk under 1 KB): true
 * when written, false when its number was voided meanwhile.
 */
export async function putChunk(messageId: string, seq: number, text: string, now: string): Promise<boolean> {
  const { Put } = chunkWrite(messageId, seq, text, now);
  return (await putIf(Put as PutCommandInput)).ok;
}

/**
 * Writes chunk `seq` and `alongside` (a keyed request's stored reply) in one transaction, so
 * a crash cannot leave the chunk without the reply a retry would replay: true when written,
 * false when its number was voided meanwhile. 2 WRU for the chunk instead of 1; keyed chunks only.
 */
export async function putChunkWith(
  messageId: string,
  seq: number,
  text: string,
  now: string,
  alongside: GuardedItem[],
  deadline: Deadline,
): Promise<boolean> {
  if (alongside.length === 0) return putChunk(messageId, seq, text, now);
  let voided = false;
  const chunk = guarded(chunkWrite(messageId, seq, text, now), () => {
    voided = true;
    return undefined;
  });
  try {
    await transact([chunk, ...alongside], deadline);
    return true;
  } catch (error) {
    if (voided) return false;
    throw error;
  }
}

/** The tombstone of a chunk number that was handed out but never written (empty text). */
export function voidChunk(messageId: string, seq: number, now: string): TransactItem {
  return putNew({
    ...Keys.chunk(messageId, seq),
    type: 'chunk',
    seq,
    text: '',
    void: true,
    ttl: Math.floor(Date.parse(now) / 1000) + CHUNK_TTL_SECONDS,
  });
}

/**
 * Ends a stream: writes the final state and text once, conditioned on the message still
 * streaming with exactly the chunks the caller assembled (a chunk reserved meanwhile makes
 * the condition fail, and the caller reassembles). Also drops the open-stream marker.
 */
export function finishStream(
  loc: MessageLocation,
  message: Pick<MessageRecord, 'id' | 'chat_id' | 'linked_media' | 'media_preview'>,
  end: {
    state: 'complete' | 'cancelled';
    contentFinal: string | null;
    contentPartial: string | null;
    now: string;
    chunkCount: number;
    /** For the timeout sweep: only if there was no activity since this time. */
    unchangedSince?: string;
  },
  /** The answer when the message changed meanwhile (a chunk was numbered, another finisher won). */
  onChanged: () => Error,
): TransactWrite[] {
  const hidden =
    end.state === 'cancelled' && end.contentFinal === null && end.contentPartial === null && !hasLinkedMedia(message);
  const conditions = ['stream_state = :streaming', 'chunk_count = :count'];
  // Hidden for having no media: a medium linked since the caller read the message fails it.
  if (hidden) conditions.push('attribute_not_exists(linked_media)');
  const values: Record<string, unknown> = {
    ':streaming': 'streaming',
    ':count': end.chunkCount,
    ':state': end.state,
    ':final': end.contentFinal,
    ':partial': end.contentPartial,
    ':now': end.now,
  };
  if (end.unchangedSince !== undefined) {
    conditions.push('updated_at = :seen');
    values[':seen'] = end.unchangedSince;
  }
  if (hidden) values[':hidden'] = true;
  return [
    guarded(
      {
        Update: {
          TableName: tableName(),
          Key: messageKey(loc),
          UpdateExpression:
            `SET stream_state = :state, content_final = :final, content_partial = :partial, ` +
            `updated_at = :now${hidden ? ', list_hidden = :hidden' : ''}`,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      onChanged,
    ),
    { Delete: { TableName: tableName(), Key: Keys.openStream(message.chat_id, message.id) } },
  ];
}

export const sortKeyOf = (message: Pick<Message, 'chat_id' | 'created_at' | 'id'>): string =>
  Keys.message(message.chat_id, message.created_at, message.id).sk;
