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

/** The fields a rewrite's request sets itself (a PATCH's fields, mark-read's last_read_at). */
export type RewriteField = 'title' | 'tags' | 'pinned' | 'model_id' | 'notifications_muted' | 'last_read_at';

export interface ChatRewrite {
  /** The chat as read. */
  read: ChatRecord;
  /** The chat as it should be: `read` with the request's fields and the recomputed derived fields. */
  next: ChatRecord;
  /** The request's own fields (always written: the request names them). */
  sets: readonly RewriteField[];
  /** Only while the title is still the default one (auto-rename never overwrites a title set meanwhile). */
  whileTitleDefault?: boolean;
}

/**
 * A recompute-style rewrite (PATCH, mark-read, mark-unread, auto-rename) as one conditional
 * UpdateItem for its transaction. It writes only what it decides, so concurrent rewrites of one
 * chat commute instead of failing each other, and conditions only on what its decisions were
 * computed from:
 * - the request's own fields are always written (a PATCH of the title needs no condition at all);
 * - a recomputed field (last_message_*, unread_count) is written only when it changed (always
 *   for unread_count when last_read_at is set), on the messages as read (`ver` unchanged) and,
 *   for unread_count, on last_read_at as read unless this write sets it;
 * - the list key (gsi1sk) pairs `pinned` with last_message_at: written when either changes,
 *   on the messages as read (`ver`) and on the pinned read unless this write sets it;
 * - the tag catalog adjustments start from the tags read (`tags_ver` unchanged, then bumped);
 * - the attention entry (gsi3) follows a written unread_count, and is removed only while no
 *   request is pending.
 * Counters other writers ADD (pending_requests_count, non_user_message_count), is_archived and
 * the fields this request does not name are left alone. `ver` is not bumped: no message changed.
 */
export function rewriteChat(r: ChatRewrite): TransactItem {
  const { read, next, sets } = r;
  const setsReadState = sets.includes('last_read_at');
  const assign: Record<string, unknown> = { updated_at: next.updated_at };
  for (const field of sets) assign[field] = next[field];
  if (sets.includes('title'))
    Object.assign(assign, { title_source: next.title_source, title_lc: next.title.toLowerCase() });
  const conditions = ['attribute_exists(pk)'];
  const values: Record<string, unknown> = {};
  const adds: string[] = [];
  const removes: string[] = [];
  // A recomputed field is written only when the recompute changed it (or, for unread_count, when
  // this write sets last_read_at): one that came out as stored leaves whatever a concurrent
  // write put there since, as if this write had come first.
  const derived = (['last_message_at', 'last_message_preview', 'last_message_role', 'unread_count'] as const).filter(
    (f) => next[f] !== read[f] || (f === 'unread_count' && setsReadState),
  );
  for (const field of derived) assign[field] = next[field];
  // The list key pairs `pinned` with last_message_at: written when either changes.
  const listKey = sets.includes('pinned') || derived.includes('last_message_at');
  if (derived.length > 0 || listKey) {
    conditions.push('ver = :ver');
    values[':ver'] = read.ver;
  }
  if (derived.includes('unread_count') && !setsReadState) {
    if (read.last_read_at === null) {
      conditions.push('attribute_type(last_read_at, :nullType)');
      values[':nullType'] = 'NULL';
    } else {
      conditions.push('last_read_at = :readLastRead');
      values[':readLastRead'] = read.last_read_at;
    }
  }
  if (listKey) {
    assign.gsi1sk = Keys.chatListing(next).gsi1sk;
    if (!sets.includes('pinned')) {
      conditions.push('pinned = :readPinned');
      values[':readPinned'] = read.pinned;
    }
  }
  if (sets.includes('tags')) {
    conditions.push(read.tags_ver === undefined ? 'attribute_not_exists(tags_ver)' : 'tags_ver = :tagsVer');
    if (read.tags_ver !== undefined) values[':tagsVer'] = read.tags_ver;
    adds.push('tags_ver :one');
    values[':one'] = 1;
  }
  if (derived.includes('unread_count')) {
    if (next.unread_count > 0 || read.pending_requests_count > 0) {
      Object.assign(assign, Keys.chatAttention(next.id));
    } else {
      removes.push('gsi3pk', 'gsi3sk');
      conditions.push('(attribute_not_exists(pending_requests_count) OR pending_requests_count <= :zero)');
      values[':zero'] = 0;
    }
  }
  if (r.whileTitleDefault) {
    conditions.push('title_source = :defaultSource');
    values[':defaultSource'] = 'default';
  }
  const names: Record<string, string> = {};
  const setParts = Object.entries(assign).map(([field, value], i) => {
    names[`#f${i}`] = field;
    values[`:f${i}`] = value;
    return `#f${i} = :f${i}`;
  });
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.chat(next.id),
      UpdateExpression:
        `SET ${setParts.join(', ')}` +
        (adds.length > 0 ? ` ADD ${adds.join(', ')}` : '') +
        (removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''),
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  };
}

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
 * rewrites (PATCH, mark-read; rewriteChat) that read the messages before it redo their recompute, and last_message_*
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
