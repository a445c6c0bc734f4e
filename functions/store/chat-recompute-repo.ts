/**
 * What a chat rewrite (core/chat-recompute.ts) reads and writes: the recompute's reads (the
 * newest messages, the unread count), the rewrite's one conditional UpdateItem, and the chat's
 * write turn that writers who keep losing races take in turn.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ChatRecord } from './chats-repo.js';
import type { MessageRecord } from './messages-repo.js';
import { countAll, ddb, deleteIf, putIf, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

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
  const taken = await putIf({
    Item: {
      ...Keys.chatWriteTurn(chatId),
      type: 'write-turn',
      owner,
      expires_at: now + ms,
      ttl: Math.ceil((now + ms) / 1000) + 3600,
    },
    ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now',
    ExpressionAttributeValues: { ':now': now },
  });
  return taken.ok;
}

/** Gives the turn back, if it is still ours. One DeleteItem. */
export async function endWriteTurn(chatId: string, owner: string): Promise<void> {
  // Not ours any more (it expired and another writer took it): nothing to give back.
  await deleteIf({
    Key: Keys.chatWriteTurn(chatId),
    ConditionExpression: '#owner = :owner',
    ExpressionAttributeNames: { '#owner': 'owner' },
    ExpressionAttributeValues: { ':owner': owner },
  });
}

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
