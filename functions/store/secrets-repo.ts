/**
 * Secrets the service generates once and keeps in the table, each in its own SECRET# partition
 * (Keys.generatedSecret), read through a per-container cache. Only the functions that use a secret
 * may reach its partition (the stack denies it to the others, lib/constructs/api-function.ts).
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ddb, tableName } from './db.js';
import { Keys } from './keys.js';
import type { GeneratedSecretName } from './keys.js';

const cache = new Map<GeneratedSecretName, Promise<string>>();

/**
 * A random secret generated on first use and shared by every function instance: the first
 * writer wins the conditional put, everyone else reads its value. Costs one strongly
 * consistent read per container.
 */
export function generatedSecret(name: GeneratedSecretName): Promise<string> {
  let pending = cache.get(name);
  if (!pending) {
    pending = loadOrCreate(name);
    pending.catch(() => cache.delete(name));
    cache.set(name, pending);
  }
  return pending;
}

async function loadOrCreate(name: GeneratedSecretName): Promise<string> {
  const key = Keys.generatedSecret(name);
  const found = await ddb().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
  if (typeof found.Item?.value === 'string') return found.Item.value;
  const value = randomBytes(32).toString('base64url');
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...key, type: 'secret', value },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return value;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const winner = await ddb().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }));
    return String(winner.Item?.value);
  }
}
