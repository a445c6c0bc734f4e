/**
 * The configuration document an administrator stored at runtime (PATCH /config/admin, contract
 * §5.2.2): one item in the SETTINGS partition holding the whole raw document and a version.
 * Writes are conditional on the version read, so two concurrent admin changes can never lose
 * each other's fields (the loser merges again onto the winner's document).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, putIf, tableName } from './db.js';
import { Keys } from './keys.js';

export interface StoredConfig {
  document: Record<string, unknown>;
  version: number;
}

const KEY = Keys.setting('admin-config');

/** The stored document, or undefined while no administrator has changed the configuration. 1 RCU. */
export async function getStoredConfig(): Promise<StoredConfig | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: KEY, ConsistentRead: true }));
  if (!out.Item) return undefined;
  return { document: JSON.parse(String(out.Item.document)) as Record<string, unknown>, version: Number(out.Item.ver) };
}

/**
 * Stores `document` as the version after `previous` (undefined: the first stored version).
 * Returns false when another write came first.
 */
export async function saveStoredConfig(
  document: Record<string, unknown>,
  previous: number | undefined,
  now: string,
): Promise<boolean> {
  const saved = await putIf({
    Item: {
      ...KEY,
      type: 'setting',
      document: JSON.stringify(document),
      ver: (previous ?? 0) + 1,
      updated_at: now,
    },
    ...(previous === undefined
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : { ConditionExpression: 'ver = :v', ExpressionAttributeValues: { ':v': previous } }),
  });
  return saved.ok;
}
