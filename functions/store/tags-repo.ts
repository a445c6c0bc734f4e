/**
 * The instance-wide tag catalog (contract §2.7): one item per exact tag name in one
 * partition, sorted by its ASCII-lower-cased name so a prefix is one key range.
 *
 * A chat write adjusts the catalog in its own transaction while the adjustments fit in it
 * (DynamoDB: at most 100 items). The rest go into catalog parts, written in that same
 * transaction and applied once it has committed: applying a part is one transaction that
 * deletes the part (conditioned on it still existing) and adjusts its tags, so each part
 * counts exactly once however often it is tried. A part whose apply failed or never ran (a
 * crash) stays marked in gsi3 until the sweeper applies it.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Deadline } from '../platform/deadline.js';
import { ddb, guarded, queryAll, tableName, transact } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

export interface TagEntry {
  name: string;
  usage_count: number;
}

/** A tag added to (+1) or removed from (-1) one chat. */
export interface TagAdjustment {
  name: string;
  delta: 1 | -1;
}

/** Catalog adjustments of one committed chat write, waiting to be applied. */
export interface CatalogPart {
  key: { pk: string; sk: string };
  adjustments: TagAdjustment[];
}

/** DynamoDB's limit on the items of one TransactWriteItems. */
export const TRANSACTION_MAX_ITEMS = 100;
/** Applying a part is its delete plus one update per adjustment, in one transaction. */
const PART_ADJUSTMENTS = TRANSACTION_MAX_ITEMS - 1;

/** Adjusts one tag's usage count by `delta`, creating the entry on first use. Entries are never deleted. */
export const adjustTag = (name: string, delta: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.tag(name),
    UpdateExpression: 'ADD usage_count :delta SET #name = :name, #type = :type',
    ExpressionAttributeNames: { '#name': 'name', '#type': 'type' },
    ExpressionAttributeValues: { ':delta': delta, ':name': name, ':type': 'tag' },
  },
});

export interface CatalogWrites {
  /** For the chat write's transaction: the adjustments that fit, then the puts of the parts. */
  items: TransactItem[];
  /** To apply (applyPart) once that transaction has committed; empty in the common case. */
  parts: CatalogPart[];
}

/**
 * The catalog side of a chat write whose transaction has `room` items left. Adjustments that
 * fit are inline (nothing else to do, as before). Otherwise they all go into parts of at most
 * 99, keyed by `changeId` (unique per transaction attempt, so a part exists only if its chat
 * write committed): the chat's transaction then touches no catalog entry, so it cannot
 * conflict with the applies of concurrent writes, and a retry of it stays small.
 */
export function catalogWrites(
  adjustments: readonly TagAdjustment[],
  room: number,
  changeId: string,
  now: string,
): CatalogWrites {
  if (adjustments.length <= room) return { items: adjustments.map((a) => adjustTag(a.name, a.delta)), parts: [] };
  const parts: CatalogPart[] = [];
  for (let i = 0, n = 1; i < adjustments.length; i += PART_ADJUSTMENTS, n++) {
    parts.push({ key: Keys.catalogPart(changeId, n), adjustments: adjustments.slice(i, i + PART_ADJUSTMENTS) });
  }
  if (parts.length > room)
    throw new Error(`catalogWrites: ${adjustments.length} adjustments need ${parts.length} parts, ${room} fit`);
  const partPuts: TransactItem[] = parts.map((part, i) => ({
    Put: {
      TableName: tableName(),
      Item: {
        ...part.key,
        type: 'tag-catalog-part',
        ...Keys.catalogPartPending(now, changeId, i + 1),
        add: part.adjustments.filter((a) => a.delta > 0).map((a) => a.name),
        remove: part.adjustments.filter((a) => a.delta < 0).map((a) => a.name),
        created_at: now,
      },
    },
  }));
  return { items: partPuts, parts };
}

class PartAlreadyApplied extends Error {}

/**
 * Applies a part: deletes it and adjusts its tags in one transaction, conditioned on the part
 * still existing. Answers false when it was already applied (by another caller). One
 * TransactWriteItems of up to 100 items.
 */
export async function applyPart(part: CatalogPart, deadline: Deadline): Promise<boolean> {
  const deletePart: TransactItem = {
    Delete: { TableName: tableName(), Key: part.key, ConditionExpression: 'attribute_exists(pk)' },
  };
  try {
    await transact(
      [guarded(deletePart, () => new PartAlreadyApplied()), ...part.adjustments.map((a) => adjustTag(a.name, a.delta))],
      deadline,
    );
    return true;
  } catch (error) {
    if (error instanceof PartAlreadyApplied) return false;
    throw error;
  }
}

/**
 * Keys of parts still waiting, written before `before` (ISO time), oldest first, at most
 * `limit`. Cost: one Query on the sparse gsi3 (eventually consistent), empty when idle.
 */
export async function pendingParts(before: string, limit: number): Promise<{ pk: string; sk: string }[]> {
  const { index, pkName, pk } = Keys.catalogPartsPendingIndex;
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: index,
      KeyConditionExpression: `${pkName} = :pk AND gsi3sk < :before`,
      ExpressionAttributeValues: { ':pk': pk, ':before': before },
      ProjectionExpression: 'pk, sk',
      Limit: limit,
    }),
  );
  return (out.Items ?? []) as { pk: string; sk: string }[];
}

/** A part by key (strongly consistent), or undefined once applied. */
export async function readPart(key: { pk: string; sk: string }): Promise<CatalogPart | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (!out.Item) return undefined;
  const names = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);
  return {
    key,
    adjustments: [
      ...names(out.Item.add).map((name): TagAdjustment => ({ name, delta: 1 })),
      ...names(out.Item.remove).map((name): TagAdjustment => ({ name, delta: -1 })),
    ],
  };
}

/**
 * Every catalog entry whose ASCII-lower-cased name starts with the prefix. Cost: reads the
 * matching entries (about 60 bytes each), all of them, because the order the API wants
 * (usage desc, name asc) is not the key order.
 */
export async function tagsWithPrefix(prefix: string): Promise<TagEntry[]> {
  const { pk, skPrefix } = Keys.tagsWithPrefix(prefix);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ProjectionExpression: '#name, usage_count',
    ExpressionAttributeNames: { '#name': 'name' },
  });
  const entries: TagEntry[] = items.map((item) => ({
    name: String(item.name),
    usage_count: Math.max(0, Number(item.usage_count ?? 0)),
  }));
  return entries;
}
