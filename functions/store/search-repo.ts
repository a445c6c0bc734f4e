/**
 * The search index's manifest (functions/core/search.ts): which segment files make up the
 * index now. One small item (about 150 bytes a segment, a few dozen segments), written only by
 * the index writer with a version condition, so two writers can never drop each other's
 * segments; every search reads it once (0.5 RCU, eventually consistent). Segments a merge
 * replaced wait for deletion as small items of their own, so the manifest does not grow.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { UNPROCESSED_BATCH, ddb, getMany, putIf, queryAll, tableName, writeMany } from './db.js';
import { Keys } from './keys.js';

export interface SegmentEntry {
  /** The segment's object key (immutable: a changed segment is a new object). */
  key: string;
  docs: number;
  bytes: number;
  minCreatedMs: number;
  maxCreatedMs: number;
}

export interface RetiredSegment {
  key: string;
  /** When it left the index (ms): readers may still be using it for a while. */
  retiredAt: number;
}

export interface SearchManifest {
  version: number;
  /** Oldest first. */
  segments: SegmentEntry[];
}

export const EMPTY_MANIFEST: SearchManifest = { version: 0, segments: [] };

/** The current manifest; `consistent` for the writer (it must see its own last write). */
export async function getManifest(consistent: boolean): Promise<SearchManifest> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.searchManifest, ConsistentRead: consistent }),
  );
  if (!out.Item) return EMPTY_MANIFEST;
  return {
    version: Number(out.Item.version),
    segments: (out.Item.segments ?? []) as SegmentEntry[],
  };
}

/**
 * Replaces the manifest read at `previous.version` with `next` (its version one higher).
 * Returns false when another writer changed it meanwhile: the caller reads it again. Each write
 * carries its own id, so a write whose answer was lost and retried (the retry then fails the
 * version condition) is still recognized as ours.
 */
export async function replaceManifest(
  previous: SearchManifest,
  next: Omit<SearchManifest, 'version'>,
): Promise<boolean> {
  const writeId = randomUUID();
  const replaced = await putIf({
    Item: {
      ...Keys.searchManifest,
      type: 'search-manifest',
      version: previous.version + 1,
      segments: next.segments,
      write_id: writeId,
    },
    ...(previous.version === 0
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : { ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': previous.version } }),
  });
  if (replaced.ok) return true;
  const now = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.searchManifest, ConsistentRead: true }),
  );
  return now.Item?.write_id === writeId;
}

/** What a search hit shows of its chat (§2.8) and the fields of its sort key (§9.1). */
export interface ChatSummary {
  id: string;
  title: string;
  agent_ids: string[];
  last_message_at: string | null;
  updated_at: string;
  created_at: string;
}

const SUMMARY_FIELDS = ['id', 'title', 'agent_ids', 'last_message_at', 'updated_at', 'created_at'];
const projection = {
  ProjectionExpression: SUMMARY_FIELDS.map((_, i) => `#f${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(SUMMARY_FIELDS.map((f, i) => [`#f${i}`, f])),
};

/**
 * Every chat's search fields (archived ones too: gsi1 lists every chat). The contract's title
 * search is a substring match over all chats with an ASCII-only case rule (§9.1), which no key
 * or filter expression can serve exactly: this reads the whole chat list (capacity is charged
 * on the items read, about 1 RCU per 8 chats eventually consistent; the projection only saves
 * transfer), and the caller matches.
 */
export async function allChatSummaries(): Promise<ChatSummary[]> {
  const { index, pkName, pk } = Keys.chatsIndex(undefined);
  const items = await queryAll({
    IndexName: index,
    KeyConditionExpression: `${pkName} = :pk`,
    ...projection,
    ExpressionAttributeValues: { ':pk': pk },
  });
  return items as unknown as ChatSummary[];
}

/**
 * The chats and the still-existing messages among the given ids, in BatchGetItem calls of up
 * to 100 keys (eventually consistent: a hit comes from an index that lags the table anyway).
 * A message exists when its pointer item does (0.5 RCU each).
 */
export async function hitContext(
  chatIds: readonly string[],
  messageIds: readonly string[],
): Promise<{ chats: Map<string, ChatSummary>; messages: Set<string> }> {
  const chats = new Map<string, ChatSummary>();
  const messages = new Set<string>();
  const keys: Record<string, unknown>[] = [
    ...[...new Set(chatIds)].map((id) => Keys.chat(id)),
    ...[...new Set(messageIds)].map((id) => Keys.messagePointer(id)),
  ];
  const read = {
    ProjectionExpression: `pk, sk, ${projection.ProjectionExpression}`,
    ExpressionAttributeNames: projection.ExpressionAttributeNames,
  };
  for (const item of await getMany(keys, read, UNPROCESSED_BATCH)) {
    if (item.sk === Keys.messagePointer('').sk) messages.add(Keys.messageIdOf(String(item.pk)));
    else chats.set(String(item.id), item as unknown as ChatSummary);
  }
  return { chats, messages };
}

/** How far the local runtime's index tail has read the event log (local/search-tail.ts). */
export async function getTailPosition(): Promise<number> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.searchTailPosition, ConsistentRead: true }),
  );
  return Number(out.Item?.seq ?? 0);
}

export async function setTailPosition(seq: number): Promise<void> {
  await ddb().send(
    new PutCommand({ TableName: tableName(), Item: { ...Keys.searchTailPosition, type: 'search-tail', seq } }),
  );
}

/** Lists segments a merge replaced, to be deleted after their grace period (1 WCU each). */
export async function recordRetired(keys: readonly string[], retiredAt: number): Promise<void> {
  const puts = keys.map((key) => ({
    PutRequest: { Item: { ...Keys.searchRetired(retiredAt, key), type: 'search-retired', key, retiredAt } },
  }));
  await writeMany(puts, UNPROCESSED_BATCH);
}

/** Replaced segments retired before `ms` (up to 1,000, oldest first). */
export async function retiredBefore(ms: number): Promise<RetiredSegment[]> {
  const { pk, skBefore } = Keys.searchRetiredBefore(ms);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk < :before',
      ExpressionAttributeValues: { ':pk': pk, ':before': skBefore },
      Limit: 1000,
    }),
  );
  return (out.Items ?? []).map((i) => ({ key: String(i.key), retiredAt: Number(i.retiredAt) }));
}

/** Forgets replaced segments whose objects are deleted. */
export async function forgetRetired(entries: readonly RetiredSegment[]): Promise<void> {
  await writeMany(
    entries.map((e) => ({ DeleteRequest: { Key: Keys.searchRetired(e.retiredAt, e.key) } })),
    UNPROCESSED_BATCH,
  );
}
