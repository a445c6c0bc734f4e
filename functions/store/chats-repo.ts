/**
 * Chat storage. A chat is one item (CHAT#<id>/CHAT) carrying the API fields, a version
 * number for optimistic concurrency, and the index keys that place it in the list (gsi1,
 * gsi2) and, while it may need attention, in the summary index (gsi3). Here: the item, its
 * read by id, its creation, and the writes other operations make on it (archive, a message's
 * activity, a request's pending count, a stream's close). A rewrite with its recompute is in
 * chat-recompute-repo.ts, the listings in chat-lists-repo.ts.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { CHAT_FIELDS, pick } from '../model.js';
import type { Chat, MessageRole } from '../model.js';
import { ddb, putNew, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

/** The stored item: the API fields plus internal bookkeeping. */
export interface ChatRecord extends Chat {
  /**
   * Bumped by every write that changes what a recompute reads (the chat's messages: message
   * creation, stream completion, dispatch failures); recompute-style rewrites are conditioned on it.
   */
  ver: number;
  /**
   * Bumped by every tag replacement (PATCH), which conditions on it: its catalog adjustments
   * start from the tags read.
   */
  tags_ver?: number;
  /** Messages whose role is not `user`: the unread count when last_read_at is null (§3.3). */
  non_user_message_count: number;
  /**
   * The sort keys of the chat's messages that are streaming (absent when none). Their chunks
   * move the message's updated_at, not the chat item's (a chat write costs three with its
   * gsi1 and gsi2 copies): readers take the chat's updated_at as the latest of its own and
   * these messages' (core/chat-reads.ts withStreamActivity). Added by a streaming message's
   * creation, removed when the stream ends, both in the transaction that writes the chat anyway.
   */
  open_streams?: Set<string>;
}

export const toChat = (item: object): Chat => pick<Chat>(item, CHAT_FIELDS);

/** The full item for a chat record, with its index keys derived from its fields. */
export function chatItem(chat: ChatRecord): Record<string, unknown> {
  const needsAttention = chat.unread_count > 0 || chat.pending_requests_count > 0;
  return {
    ...Keys.chat(chat.id),
    type: 'chat',
    ...chat,
    title_lc: chat.title.toLowerCase(),
    ...Keys.chatListing(chat),
    ...(needsAttention ? Keys.chatAttention(chat.id) : {}),
  };
}

export async function getChat(chatId: string): Promise<ChatRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.chat(chatId), ConsistentRead: true }),
  );
  return out.Item as ChatRecord | undefined;
}

/** Put of a new chat; fails its condition if the id exists. */
export const putNewChat = (chat: ChatRecord): TransactItem => putNew(chatItem(chat));

/** Sets the archived flag (and its index key) without reading the chat first; no rewrite depends on it. */
export const setArchived = (chatId: string, archived: boolean, now: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.chat(chatId),
    UpdateExpression: 'SET is_archived = :archived, updated_at = :now, gsi2pk = :gsi2pk',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: {
      ':archived': archived,
      ':now': now,
      ':gsi2pk': Keys.chatListing({ id: chatId, pinned: false, is_archived: archived, last_message_at: null }).gsi2pk,
    },
  },
});

/** What a message operation changes on its chat (§3.2, incremental). */
export interface ChatActivity {
  now: string;
  /** The chat's `pinned` as read: the list-order key depends on it. */
  pinned: boolean;
  /** The chat's model_id as the caller used it (a message copies it): the write fails if it changed. */
  modelId?: string;
  /** Sets last_message_at (and the list-order key) unless the chat already has a newer one. */
  lastMessageAt?: string;
  /** Sets last_message_preview and last_message_role, together with lastMessageAt. */
  preview?: { text: string | null; role: MessageRole };
  /** A non-user message: unread_count and non_user_message_count += 1. */
  countsUnread?: boolean;
  /** A streaming message created (its sort key joins open_streams). */
  streamOpened?: string;
  /** A stream ended (its sort key leaves open_streams). */
  streamClosed?: string;
}

/**
 * The chat's side of a message operation as one UpdateItem for the operation's transaction:
 * counters are atomic ADDs (concurrent messages lose no count), `ver` is bumped so
 * rewrites (PATCH, mark-read; chat-recompute-repo.ts rewriteChat) that read the messages before it redo their recompute, and last_message_*
 * only move forward: the condition fails when a newer message already set them, or when
 * `pinned` changed since it was read; the caller then retries (see commitTouchingChat in core/chat-activity.ts).
 */
export function recordActivity(chatId: string, a: ChatActivity): TransactItem {
  const sets = ['updated_at = :now'];
  const adds = ['ver :one'];
  const conditions = ['attribute_exists(pk)'];
  const values: Record<string, unknown> = { ':now': a.now, ':one': 1 };
  if (a.modelId !== undefined) {
    conditions.push('model_id = :model');
    values[':model'] = a.modelId;
  }
  if (a.lastMessageAt !== undefined) {
    sets.push('last_message_at = :at', 'gsi1sk = :listing');
    conditions.push('pinned = :pinned', '(attribute_type(last_message_at, :nullType) OR last_message_at <= :at)');
    values[':at'] = a.lastMessageAt;
    values[':pinned'] = a.pinned;
    values[':nullType'] = 'NULL';
    values[':listing'] = Keys.chatListing({
      id: chatId,
      pinned: a.pinned,
      is_archived: false,
      last_message_at: a.lastMessageAt,
    }).gsi1sk;
    if (a.preview) {
      sets.push('last_message_preview = :preview', 'last_message_role = :role');
      values[':preview'] = a.preview.text;
      values[':role'] = a.preview.role;
    }
  }
  if (a.countsUnread) {
    adds.push('unread_count :one', 'non_user_message_count :one');
    const attention = Keys.chatAttention(chatId);
    sets.push('gsi3pk = :g3pk', 'gsi3sk = :g3sk');
    values[':g3pk'] = attention.gsi3pk;
    values[':g3sk'] = attention.gsi3sk;
  }
  if (a.streamOpened !== undefined) {
    adds.push('open_streams :opened');
    values[':opened'] = new Set([a.streamOpened]);
  }
  if (a.streamClosed !== undefined) values[':closed'] = new Set([a.streamClosed]);
  const deletes = a.streamClosed !== undefined ? ' DELETE open_streams :closed' : '';
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.chat(chatId),
      UpdateExpression: `SET ${sets.join(', ')} ADD ${adds.join(', ')}${deletes}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeValues: values,
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * A request created (+1) or ended (-1): pending_requests_count and updated_at, atomically. No
 * version bump: no recompute reads requests (a rewrite removes the attention entry only while
 * the count is 0, see rewriteChat). A count can only go down for a request that was counted
 * when it was created, so it never goes below 0.
 */
export function adjustPending(chatId: string, delta: 1 | -1, now: string): TransactItem {
  const attention = Keys.chatAttention(chatId);
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.chat(chatId),
      UpdateExpression:
        `SET updated_at = :now${delta > 0 ? ', gsi3pk = :g3pk, gsi3sk = :g3sk' : ''} ADD ` +
        `pending_requests_count :delta`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: {
        ':now': now,
        ':delta': delta,
        ...(delta > 0 ? { ':g3pk': attention.gsi3pk, ':g3sk': attention.gsi3sk } : {}),
      },
    },
  };
}

/** Fails its transaction (index of this item) when the chat does not exist. */
export const chatExists = (chatId: string): TransactItem => ({
  ConditionCheck: { TableName: tableName(), Key: Keys.chat(chatId), ConditionExpression: 'attribute_exists(pk)' },
});

/**
 * A stream cancelled (or timed out): the chat's updated_at bumped and the message dropped from
 * its open streams. The version is bumped, so a version-conditioned rewrite that read the chat
 * before cannot put the stream back.
 */
export const closeStream = (chatId: string, messageSk: string, now: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.chat(chatId),
    UpdateExpression: 'SET updated_at = :now ADD ver :one DELETE open_streams :closed',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':now': now, ':one': 1, ':closed': new Set([messageSk]) },
  },
});
