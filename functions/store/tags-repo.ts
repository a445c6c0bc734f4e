/**
 * The instance-wide tag catalog (contract §2.7): one item per exact tag name in one
 * partition, sorted by its ASCII-lower-cased name so a prefix is one key range.
 */
import { queryAll, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

export interface TagEntry {
  name: string;
  usage_count: number;
}

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
  const entries: TagEntry[] = items.map((item) => ({ name: String(item.name), usage_count: Math.max(0, Number(item.usage_count ?? 0)) }));
  return entries;
}
