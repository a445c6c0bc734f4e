/**
 * Secrets the service keeps in the table, each in its own SECRET# partition (Keys.generatedSecret),
 * read through a per-container cache. Only the functions that use a secret may reach its partition
 * (the stack denies it to the others, lib/constructs/api-function.ts). Two kinds:
 * - the cursor-signing key, generated on first use by the first paginating request (generatedSecret);
 * - the stored secrets (instance secret, origin-verify value, VAPID key pair), made at deploy time by
 *   a custom resource (functions/jobs/stored-secrets.ts, keepOrPut) and read by the functions the
 *   stack names in STORED_SECRETS (storedSecret), kept STORED_SECRET_TTL_MS so a value the owner
 *   puts in the item is in use everywhere within five minutes.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { env } from '../platform/env.js';
import { ddb, tableName } from './db.js';
import { Keys, STORED_SECRET_NAMES } from './keys.js';
import type { FirstUseSecretName, GeneratedSecretName, StoredSecretName } from './keys.js';

const cache = new Map<FirstUseSecretName, Promise<string>>();

/**
 * A random secret generated on first use and shared by every function instance: the first
 * writer wins the conditional put, everyone else reads its value. Costs one strongly
 * consistent read per container.
 */
export function generatedSecret(name: FirstUseSecretName): Promise<string> {
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
export async function existingSecret(name: FirstUseSecretName): Promise<string | undefined> {
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

async function loadOrCreate(name: FirstUseSecretName): Promise<string> {
  const found = await load(name);
  if (found !== undefined) return found;
  return (await keepOrPut(name, randomBytes(32).toString('base64url'))).value;
}

/**
 * Puts `value` as the secret unless one is already there (a conditional put: a value the owner set,
 * or an earlier deploy's, is kept). The value in effect afterwards, and whether it is `value`.
 */
export async function keepOrPut(
  name: GeneratedSecretName,
  value: string,
): Promise<{ value: string; created: boolean }> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...Keys.generatedSecret(name), type: 'secret', value },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return { value, created: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const kept = await load(name);
    if (kept === undefined) throw new Error(`The ${name} secret item has no string value`);
    return { value: kept, created: false };
  }
}

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random string of letters and digits (header- and URL-safe), uniformly drawn (crypto randomInt). */
export function randomAlphanumeric(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
  return out;
}

/** How long a container keeps the stored secrets before reading them again (ms). */
export const STORED_SECRET_TTL_MS = 300_000;
let storedTtlMs = STORED_SECRET_TTL_MS;
let stored: { names: string; at: number; values: Promise<Map<StoredSecretName, string>> } | undefined;

/** Tests: a shorter cache (instead of waiting five minutes), and forget what was read. */
export function setStoredSecretTtlForTests(ms: number = STORED_SECRET_TTL_MS): void {
  storedTtlMs = ms;
  stored = undefined;
}

/** The stored secrets this function may read (STORED_SECRETS, set by the stack with its IAM grant). */
export function readableStoredSecrets(): StoredSecretName[] {
  const listed = (env().STORED_SECRETS ?? '').split(',').map((name) => name.trim());
  return STORED_SECRET_NAMES.filter((name) => listed.includes(name));
}

/** Whether this function may read the stored secret (the stack listed it in STORED_SECRETS). */
export const mayReadStoredSecret = (name: StoredSecretName): boolean => readableStoredSecrets().includes(name);

/**
 * A stored secret this function may read. Its item missing is a broken deployment, which fails
 * closed: an error (a 500), never an instance without its secret.
 */
export async function requiredStoredSecret(name: StoredSecretName): Promise<string> {
  const value = await storedSecret(name);
  if (value === undefined) {
    throw new Error(`The ${name} secret (${Keys.generatedSecret(name).pk}) is missing or not readable here`);
  }
  return value;
}

/**
 * A stored secret's value, or undefined when this function may not read it (not in STORED_SECRETS)
 * or its item is missing. Every secret the function may read comes in one strongly consistent
 * BatchGetItem (1 RRU per item) per container and per STORED_SECRET_TTL_MS; a failed read is not kept.
 */
export async function storedSecret(name: StoredSecretName): Promise<string | undefined> {
  const names = readableStoredSecrets();
  if (!names.includes(name)) return undefined;
  const now = Date.now();
  const listed = names.join(',');
  if (!stored || stored.names !== listed || now - stored.at >= storedTtlMs) {
    const entry = { names: listed, at: now, values: loadStored(names) };
    entry.values.catch(() => {
      if (stored === entry) stored = undefined;
    });
    stored = entry;
  }
  return (await stored.values).get(name);
}

async function loadStored(names: StoredSecretName[]): Promise<Map<StoredSecretName, string>> {
  const values = new Map<StoredSecretName, string>();
  const byPartition = new Map(names.map((name) => [Keys.generatedSecret(name).pk, name]));
  let keys: Record<string, unknown>[] = names.map((name) => Keys.generatedSecret(name));
  // BatchGetItem may leave keys unprocessed under throttling: ask again for those (a few times).
  for (let attempt = 0; keys.length > 0; attempt++) {
    if (attempt === 5) throw new Error('Stored secrets unread after 5 attempts (unprocessed keys)');
    const out = await ddb().send(
      new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: keys, ConsistentRead: true } } }),
    );
    for (const item of out.Responses?.[tableName()] ?? []) {
      const name = byPartition.get(String(item.pk));
      if (name && typeof item.value === 'string' && item.value !== '') values.set(name, item.value);
    }
    keys = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Record<string, unknown>[];
  }
  return values;
}
