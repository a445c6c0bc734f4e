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

/**
 * The secret if it was ever generated, without generating it: for checks (a cursor cannot have
 * been signed with a key that does not exist yet), so a rejected request writes nothing.
 */
export async function existingSecret(name: GeneratedSecretName): Promise<string | undefined> {
  const pending = cache.get(name);
  if (pending) return pending;
  const value = await load(name);
  if (value !== undefined && !cache.has(name)) cache.set(name, Promise.resolve(value));
  return value;
}

async function load(name: GeneratedSecretName): Promise<string | undefined> {
  const found = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.generatedSecret(name), ConsistentRead: true }),
  );
  return typeof found.Item?.value === 'string' ? found.Item.value : undefined;
}

async function loadOrCreate(name: GeneratedSecretName): Promise<string> {
  const key = Keys.generatedSecret(name);
  const found = await load(name);
  if (found !== undefined) return found;
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
    return String(await load(name));
  }
}
