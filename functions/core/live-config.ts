/**
 * The live configuration (contract §5.2, §12): the document an administrator stored at runtime
 * (PATCH /config/admin) wins over the deployed one (INSTANCE_CONFIG), both under the §12.2
 * overrides. Every function reads the stored document through a per-container cache of
 * CONFIG_CACHE_MS (default 5 s; one strongly consistent GetItem per refresh), so a change is
 * seen by every instance within that bound, and at once by the instance that made it.
 *
 * The instance secret comes from the deployment (OPENGRAM_INSTANCE_SECRET), or from the table's
 * SECRET#INSTANCE item when INSTANCE_SECRET_IN_TABLE is set (store/secrets-repo.ts: one read per
 * container, kept 5 minutes) — for the functions that check auth; the others, which may not read
 * it, resolve with INSTANCE_SECRET_UNREADABLE, which middleware/auth.ts never compares against.
 * The §12.2 overrides are applied on every read; the parsed result is memoized per input.
 */
import { ValidationError } from '../errors.js';
import { deployedDocument } from '../platform/config.js';
import { env } from '../platform/env.js';
import { ConfigValidationError, INSTANCE_SECRET_UNREADABLE, resolveConfig } from '../platform/instance-config.js';
import type { ConfigOverrides, InstanceConfig } from '../platform/instance-config.js';
import { getStoredConfig, saveStoredConfig } from '../store/config-repo.js';
import type { StoredConfig } from '../store/config-repo.js';
import { mayReadStoredSecret, requiredStoredSecret } from '../store/secrets-repo.js';

let memo: { key: string; config: InstanceConfig } | undefined;

/** The instance secret kept in the table, when the stack keeps it there (INSTANCE_SECRET_IN_TABLE). */
async function tableInstanceSecret(): Promise<string | undefined> {
  if (!env().INSTANCE_SECRET_IN_TABLE) return undefined;
  if (!mayReadStoredSecret('INSTANCE')) return INSTANCE_SECRET_UNREADABLE;
  // Fail closed: without its item, a secret-protected instance must not resolve as an open one.
  return requiredStoredSecret('INSTANCE');
}

/**
 * The effective configuration of a raw document: §12.1 defaults, the document, the §12.2
 * overrides, validated (§12.3; throws ConfigValidationError). `key` identifies the document for
 * the memo (the stored version, or the deployed text).
 */
async function configFrom(document: unknown, key: string): Promise<InstanceConfig> {
  const overrides = await currentOverrides();
  const memoKey = `${key}\u0000${JSON.stringify(overrides)}`;
  if (memo?.key !== memoKey) memo = { key: memoKey, config: resolveConfig(document, overrides) };
  return memo.config;
}

async function currentOverrides(): Promise<ConfigOverrides> {
  const e = env();
  return {
    OPENGRAM_INSTANCE_SECRET: e.OPENGRAM_INSTANCE_SECRET || (await tableInstanceSecret()),
    OPENGRAM_PUBLIC_BASE_URL: e.OPENGRAM_PUBLIC_BASE_URL,
    OPENGRAM_CORS_ORIGINS: e.OPENGRAM_CORS_ORIGINS,
    OPENGRAM_SERVER_PORT: e.OPENGRAM_SERVER_PORT,
    VAPID_PUBLIC_KEY: e.VAPID_PUBLIC_KEY,
  };
}

/** Validates a candidate document as it would resolve (throws ConfigValidationError); remembers nothing. */
async function checkDocument(document: unknown): Promise<InstanceConfig> {
  return resolveConfig(document, await currentOverrides());
}

/** The deployed configuration (no administrator change): INSTANCE_CONFIG with the overrides. */
const deployedConfig = (): Promise<InstanceConfig> =>
  configFrom(deployedDocument(), `deployed:${env().INSTANCE_CONFIG ?? ''}`);

let cache: { stored: StoredConfig | undefined; at: number } | undefined;
let loading: Promise<StoredConfig | undefined> | undefined;

async function storedNow(): Promise<StoredConfig | undefined> {
  if (cache && Date.now() - cache.at < env().CONFIG_CACHE_MS) return cache.stored;
  loading ??= getStoredConfig()
    .then((stored) => {
      cache = { stored, at: Date.now() };
      return stored;
    })
    .finally(() => (loading = undefined));
  return loading;
}

/**
 * The configuration without any storage call, for a route that must answer while DynamoDB does
 * not (GET /health, §5.1; lib/routes.ts `table: 'none'`): the stored document this container last
 * read, however old, else the deployed one (INSTANCE_CONFIG), under the §12.2 overrides. A
 * function that never reads the stored document (health's own, on AWS) works with the deployed
 * configuration.
 */
export async function lastKnownConfig(): Promise<InstanceConfig> {
  const stored = cache?.stored;
  return stored ? configFrom(stored.document, `stored:${stored.version}`) : deployedConfig();
}

/** The configuration every request and job works with. */
export async function getConfig(): Promise<InstanceConfig> {
  const stored = await storedNow();
  return stored ? configFrom(stored.document, `stored:${stored.version}`) : deployedConfig();
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** §5.2.2: the document after an admin change (pure). Throws 400 for a non-object rawConfig. */
export function applyAdminChange(
  base: Record<string, unknown>,
  body: Record<string, unknown>,
): Record<string, unknown> {
  if ('rawConfig' in body) {
    if (!isObject(body.rawConfig)) throw new ValidationError('rawConfig must be a JSON object');
    return body.rawConfig;
  }
  const next = structuredClone(base);
  if (body.agents !== undefined) {
    next.agents = body.agents;
    if (body.models === undefined && Array.isArray(body.agents)) {
      const models = Array.isArray(next.models) ? [...(next.models as unknown[])] : [];
      const known = new Set(models.map((m) => (isObject(m) ? m.id : undefined)));
      for (const agent of body.agents) {
        const id = isObject(agent) ? agent.defaultModelId : undefined;
        if (typeof id !== 'string' || id === '' || known.has(id)) continue;
        models.push({ id, name: id, description: '' });
        known.add(id);
      }
      next.models = models;
    }
  }
  if (body.models !== undefined) {
    next.models = body.models;
    delete next.defaultModelIdForNewChats;
  }
  if (body.security !== undefined) {
    next.security = {
      ...(isObject(next.security) ? next.security : {}),
      ...(isObject(body.security) ? body.security : {}),
    };
  }
  if (body.defaultModelIdForNewChats === null) delete next.defaultModelIdForNewChats;
  else if (body.defaultModelIdForNewChats !== undefined)
    next.defaultModelIdForNewChats = body.defaultModelIdForNewChats;
  if (isObject(body.push)) next.push = { ...(isObject(next.push) ? next.push : {}), ...body.push };
  if (Array.isArray(body.hooks)) next.hooks = hooksKeepingSecrets(next.hooks, body.hooks);
  if ('autoRename' in body) {
    if (body.autoRename === null) delete next.autoRename;
    else if (isObject(body.autoRename)) {
      const merged: Record<string, unknown> = {
        ...(isObject(next.autoRename) ? next.autoRename : {}),
        ...body.autoRename,
      };
      if (body.autoRename.apiKey === '') delete merged.apiKey;
      next.autoRename = merged;
    }
  }
  return next;
}

/**
 * The extension's `hooks` (README "Settings without rawConfig"): replaces the list; a hook that
 * gives no `signingSecret` or no `headers` keeps those of the stored hook with the same url (each
 * stored hook lends them once, in order), so a client that never saw them does not erase them;
 * `signingSecret: ""` removes the secret and `headers: {}` the headers.
 */
function hooksKeepingSecrets(stored: unknown, given: unknown[]): unknown[] {
  const lenders = Array.isArray(stored) ? stored.filter(isObject) : [];
  return given.map((hook) => {
    if (!isObject(hook)) return hook;
    const index = lenders.findIndex((h) => h.url === hook.url);
    const lender = index >= 0 ? lenders.splice(index, 1)[0]! : {};
    const next: Record<string, unknown> = { ...hook };
    if (!('signingSecret' in hook) && lender.signingSecret !== undefined) next.signingSecret = lender.signingSecret;
    if (hook.signingSecret === '') delete next.signingSecret;
    if (!('headers' in hook) && lender.headers !== undefined) next.headers = lender.headers;
    return next;
  });
}

/** The largest configuration document an admin change may store. */
export const MAX_CONFIG_BYTES = 256 * 1024;

/**
 * PATCH /config/admin: merges the change onto the current document, validates the result as a
 * whole (§12.3: nothing is saved on a failure) and stores it conditionally on the version it
 * read; a concurrent change makes it read and merge again, so no field is lost.
 */
export async function updateAdminConfig(body: Record<string, unknown>): Promise<{ ok: true }> {
  for (let attempt = 0; ; attempt++) {
    const current = await getStoredConfig();
    const next = applyAdminChange(current?.document ?? deployedDocument(), body);
    try {
      await checkDocument(next);
    } catch (error) {
      if (error instanceof ConfigValidationError) throw new ValidationError(error.message);
      throw error;
    }
    // Stored as one JSON string in one item (400 KB at most): bounded well under it (README "Limits").
    if (Buffer.byteLength(JSON.stringify(next), 'utf8') > MAX_CONFIG_BYTES) {
      throw new ValidationError(
        `Config validation error: the configuration exceeds ${MAX_CONFIG_BYTES} bytes of JSON.`,
      );
    }
    if (await saveStoredConfig(next, current?.version, new Date().toISOString())) {
      // This instance sees its own change from the very next request.
      cache = { stored: { document: next, version: (current?.version ?? 0) + 1 }, at: Date.now() };
      return { ok: true };
    }
    if (attempt >= 20) throw new Error('PATCH /config/admin: too many concurrent configuration changes');
    await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
  }
}

/** Tests only: forgets the cached stored document, as a new container would. */
export function forgetConfigCacheForTests(): void {
  cache = undefined;
}
