/**
 * Chat storage. A chat is one item (CHAT#<id>/CHAT) carrying the API fields, a version
 * number for optimistic concurrency, and the index keys that place it in the list (gsi1,
 * gsi2) and, while it may need attention, in the summary index (gsi3).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { CHAT_FIELDS, pick } from '../model.js';
import type { Chat, MessageRole } from '../model.js';
import type { MessageRecord } from './messages-repo.js';
import { countAll, ddb, queryAll, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

/** The stored item: the API fields plus internal bookkeeping. */
export interface ChatRecord extends Chat {
  /** Bumped by every write; recompute-style writes are conditioned on it. */
  ver: number;
  /** Messages whose role is not `user`: the unread count when last_read_at is null (§3.3). */
  non_user_message_count: number;
  /**
   * The sort keys of the chat's messages that are streaming (absent when none). Their chunks
   * move the message's updated_at, not the chat item's (a chat write costs three with its
   * gsi1 and gsi2 copies): readers take the chat's updated_at as the latest of its own and
   * these messages' (core/chats.ts withStreamActivity). Added by a streaming message's
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
export const putNewChat = (chat: ChatRecord): TransactItem => ({
  Put: { TableName: tableName(), Item: chatItem(chat), ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Put of a rewritten chat, conditioned on the version that was read. */
export const replaceChat = (chat: ChatRecord, readVersion: number): TransactItem => ({
  Put: {
    TableName: tableName(),
    Item: chatItem(chat),
    ConditionExpression: 'ver = :ver',
    ExpressionAttributeValues: { ':ver': readVersion },
  },
});

/**
 * Takes the chat's write turn for `ms` if nobody holds it or the holder's time is up. Only
 * writers that lost a version race ask for it, so they take turns instead of crowding out
 * each other's attempts; correctness still rests on the version condition. One PutItem.
 */
export async function takeWriteTurn(chatId: string, owner: string, now: number, ms: number): Promise<boolean> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...Keys.chatWriteTurn(chatId),
          type: 'write-turn',
          owner,
          expires_at: now + ms,
          ttl: Math.ceil((now + ms) / 1000) + 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}

/** Gives the turn back, if it is still ours. One DeleteItem. */
export async function endWriteTurn(chatId: string, owner: string): Promise<void> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: Keys.chatWriteTurn(chatId),
        ConditionExpression: '#owner = :owner',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':owner': owner },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** Sets the archived flag (and its index key) without reading the chat first. */
export const setArchived = (chatId: string, archived: boolean, now: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.chat(chatId),
    UpdateExpression: 'SET is_archived = :archived, updated_at = :now, gsi2pk = :gsi2pk ADD ver :one',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: {
      ':archived': archived,
      ':now': now,
      ':gsi2pk': Keys.chatListing({ id: chatId, pinned: false, is_archived: archived, last_message_at: null }).gsi2pk,
      ':one': 1,
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
 * version-conditioned rewrites (PATCH, mark-read) redo their recompute, and last_message_*
 * only move forward: the condition fails when a newer message already set them, or when
 * `pinned` changed since it was read; the caller then retries (see commitTouchingChat in core/messages.ts).
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
 * A request created (+1) or ended (-1): pending_requests_count and updated_at, atomically,
 * with a version bump (so a concurrent recompute-style rewrite redoes its work). A count can
 * only go down for a request that was counted when it was created, so it never goes below 0.
 */
export function adjustPending(chatId: string, delta: 1 | -1, now: string): TransactItem {
  const attention = Keys.chatAttention(chatId);
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.chat(chatId),
      UpdateExpression:
        `SET updated_at = :now${delta > 0 ? ', gsi3pk = :g3pk, gsi3sk = :g3sk' : ''} ADD ` +
        `pending_requests_count :delta, ver :one`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: {
        ':now': now,
        ':delta': delta,
        ':one': 1,
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

/** The newest `count` messages of a chat, newest first. Cost: one Query reading `count` items. */
export async function newestMessages(chatId: string, count: number): Promise<MessageRecord[]> {
  const { pk, skPrefix } = Keys.messagesOf(chatId);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
      ScanIndexForward: false,
      Limit: count,
      ConsistentRead: true,
    }),
  );
  return (out.Items ?? []) as MessageRecord[];
}

/**
 * The number of non-user messages created strictly after `time`. Cost: reads the messages
 * after `time` (the unread ones), so it grows with the unread backlog, not the history.
 */
export async function countNonUserMessagesAfter(chatId: string, time: string): Promise<number> {
  const { pk, skAfter } = Keys.messagesAfter(chatId, time);
  const { skPrefix } = Keys.messagesOf(chatId);
  return countAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    FilterExpression: '#role <> :user',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':pk': pk, ':from': skAfter, ':to': `${skPrefix}\uffff`, ':user': 'user' },
    ConsistentRead: true,
  });
}

export interface ChatPageQuery {
  archived?: boolean;
  tag?: string;
  agentId?: string;
  /** Lower-cased title substring. */
  titleContains?: string;
  limit: number;
  after?: { sortKey: string; chatId: string };
}

/**
 * One page of chats in list order. Unfiltered, it is one Query of limit+1 items. With a
 * tag, agent or title filter, DynamoDB applies a FilterExpression after reading, so this keeps
 * reading pages of 100 until limit+1 matches are found or the index ends: a selective filter
 * costs reads in proportion to the chats it skips (capacity is charged on items read).
 */
export async function queryChats(
  q: ChatPageQuery,
): Promise<{ chats: ChatRecord[]; hasMore: boolean; sortKeyOf: (c: ChatRecord) => string }> {
  const { index, pkName, pk } = Keys.chatsIndex(q.archived);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': pk };
  if (q.tag) {
    filters.push('contains(tags, :tag)');
    values[':tag'] = q.tag;
  }
  if (q.agentId) {
    filters.push('contains(agent_ids, :agent)');
    values[':agent'] = q.agentId;
  }
  if (q.titleContains) {
    filters.push('contains(title_lc, :title)');
    values[':title'] = q.titleContains;
  }
  const want = q.limit + 1;
  const found: ChatRecord[] = [];
  let start: Record<string, unknown> | undefined = q.after
    ? { ...Keys.chat(q.after.chatId), [pkName]: pk, gsi1sk: q.after.sortKey }
    : undefined;
  do {
    const input: QueryCommandInput = {
      TableName: tableName(),
      IndexName: index,
      KeyConditionExpression: `${pkName} = :pk`,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: filters.length > 0 ? 100 : want - found.length,
      ExclusiveStartKey: start,
      ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
    };
    const out = await ddb().send(new QueryCommand(input));
    found.push(...((out.Items ?? []) as ChatRecord[]));
    start = out.LastEvaluatedKey;
  } while (found.length < want && start);
  return {
    chats: found.slice(0, q.limit),
    hasMore: found.length > q.limit,
    sortKeyOf: (c) => Keys.chatListing(c).gsi1sk,
  };
}

export interface AttentionEntry {
  unread_count: number;
  pending_requests_count: number;
  agent_ids: string[];
  is_archived: boolean;
}

/**
 * Every chat that may have unread messages or pending requests, from the sparse gsi3 with
 * its small projection. Cost grows with chats needing attention, not with all chats.
 */
export async function chatsNeedingAttention(): Promise<AttentionEntry[]> {
  const { index, pkName, pk } = Keys.attentionIndex;
  const entries = (await queryAll({
    IndexName: index,
    KeyConditionExpression: `${pkName} = :pk`,
    ExpressionAttributeValues: { ':pk': pk },
  })) as unknown as AttentionEntry[];
  return entries;
}
