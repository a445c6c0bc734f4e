/**
 * The live instance configuration (contract §5.2, §12): which document is in force, read and
 * cached; the administrator's changes to it (PATCH /config/admin); and its view without secrets
 * (GET /config). The document's shape, defaults, rules and the §12.2 overrides are its pure half,
 * platform/instance-config.ts (the stack and the platform use them too); the deployment's
 * variables are platform/env.ts.
 *
 * The document an administrator stored (SETTINGS/admin-config) wins over the deployed one
 * (INSTANCE_CONFIG, never holding secrets in a deployed stack), both under the §12.2 overrides,
 * applied on every read. Every function reads the stored document through a per-container cache
 * of CONFIG_CACHE_MS (default 5 s; one strongly consistent GetItem per refresh), so a change is
 * seen by every instance within that bound, and at once by the instance that made it.
 *
 * The instance secret comes from the table's SECRET#INSTANCE item when INSTANCE_SECRET_IN_TABLE
 * is set (store/secrets-repo.ts: one read per container, kept 5 minutes), for the functions that
 * check auth; the others, which may not read it, resolve with INSTANCE_SECRET_UNREADABLE, which
 * middleware/auth.ts never compares against.
 */
import { ValidationError } from '../errors.js';
import { CHEAP_MODELS, RENAME_PROVIDERS } from '../model/rename-providers.js';
import { env } from '../platform/env.js';
import {
  ConfigValidationError,
  INSTANCE_SECRET_UNREADABLE,
  isObject,
  resolveConfig,
} from '../platform/instance-config.js';
import type { ConfigOverrides, InstanceConfig } from '../platform/instance-config.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { getStoredConfig, saveStoredConfig } from '../store/config-repo.js';
import type { StoredConfig } from '../store/config-repo.js';
import { mayReadStoredSecret, requiredStoredSecret } from '../store/secrets-repo.js';
import { revokeAllSessions } from './sessions.js';

// ---- The document's overrides and its resolution ----

/** The instance secret kept in the table, when the stack keeps it there (INSTANCE_SECRET_IN_TABLE). */
async function tableInstanceSecret(): Promise<string | undefined> {
  if (!env().INSTANCE_SECRET_IN_TABLE) return undefined;
  if (!mayReadStoredSecret('INSTANCE')) return INSTANCE_SECRET_UNREADABLE;
  // Fail closed: without its item, a secret-protected instance must not resolve as an open one.
  return requiredStoredSecret('INSTANCE');
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

/** The document the deployment was given (INSTANCE_CONFIG), before any administrator change. */
function deployedDocument(): Record<string, unknown> {
  const raw = env().INSTANCE_CONFIG ?? '';
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

let memo: { key: string; config: InstanceConfig } | undefined;

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

/** The configuration of the stored document, else of the deployed one (INSTANCE_CONFIG). */
const configOf = (stored: StoredConfig | undefined): Promise<InstanceConfig> =>
  stored
    ? configFrom(stored.document, `stored:${stored.version}`)
    : configFrom(deployedDocument(), `deployed:${env().INSTANCE_CONFIG ?? ''}`);

// ---- The live document, cached per container ----

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
export const lastKnownConfig = (): Promise<InstanceConfig> => configOf(cache?.stored);

/** The configuration every request and job works with. */
export const getConfig = async (): Promise<InstanceConfig> => configOf(await storedNow());

/** Tests only: forgets the cached stored document, as a new container would. */
export function forgetConfigCacheForTests(): void {
  cache = undefined;
}

// ---- PATCH /config/admin ----

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
 * The extension's `hooks` (docs/divergences.md "Settings without rawConfig"): replaces the list;
 * a hook that gives no `signingSecret` or no `headers` keeps those of the stored hook with the same url (each
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
 * An admin change that lost the conditional write to another one reads and merges again. Admin
 * changes are rare and small, so 21 tries (20 retries) only run out under a flood of them; the
 * pause, 10–50 ms at random, parts two writers that keep colliding.
 */
const CONCURRENT_ADMIN_CHANGES: RetryPolicy<boolean> = {
  attempts: 21,
  backoff: () => 10 + Math.random() * 40,
  retryResult: (saved) => !saved,
};

/**
 * PATCH /config/admin: merges the change onto the current document, validates the result as a
 * whole (§12.3: nothing is saved on a failure) and stores it conditionally on the version it
 * read; a concurrent change makes it read and merge again, so no field is lost.
 */
export async function updateAdminConfig(body: Record<string, unknown>): Promise<{ ok: true }> {
  let secretChanged = false;
  const saved = await retry(CONCURRENT_ADMIN_CHANGES, async () => {
    const current = await getStoredConfig();
    const base = current?.document ?? deployedDocument();
    const next = applyAdminChange(base, body);
    const overrides = await currentOverrides();
    try {
      secretChanged = securityKey(resolveConfig(next, overrides)) !== securityKeyOf(base, overrides);
    } catch (error) {
      if (error instanceof ConfigValidationError) throw new ValidationError(error.message);
      throw error;
    }
    // Stored as one JSON string in one item (400 KB at most): bounded well under it
    // (docs/architecture.md "Limits").
    if (Buffer.byteLength(JSON.stringify(next), 'utf8') > MAX_CONFIG_BYTES) {
      throw new ValidationError(
        `Config validation error: the configuration exceeds ${MAX_CONFIG_BYTES} bytes of JSON.`,
      );
    }
    if (!(await saveStoredConfig(next, current?.version, new Date().toISOString()))) return false;
    // This instance sees its own change from the very next request.
    cache = { stored: { document: next, version: (current?.version ?? 0) + 1 }, at: Date.now() };
    return true;
  });
  if (!saved) throw new Error('PATCH /config/admin: too many concurrent configuration changes');
  // A new secret (or the secret turned off or on) ends every browser session (contract §1.11.1), so
  // their records go: every instance and every open event stream learns it within seconds.
  if (secretChanged) await revokeAllSessions();
  return { ok: true };
}

/** What browser sessions depend on: whether the secret is on, and which it is. */
const securityKey = (config: InstanceConfig): string =>
  JSON.stringify([config.security.instanceSecretEnabled, config.security.instanceSecret]);

function securityKeyOf(document: unknown, overrides: ConfigOverrides): string | undefined {
  try {
    return securityKey(resolveConfig(document, overrides));
  } catch {
    return undefined;
  }
}

// ---- GET /config: the configuration without secrets (§2.11) ----

/**
 * The largest upload the platform takes in one request: a synchronous Lambda payload is
 * capped at 6 MB and API Gateway base64-encodes binary bodies (×4/3), leaving about 4.4 MB
 * of file after multipart overhead. Larger files, up to `maxUploadBytes`, go through an
 * upload session (presigned POST to storage, then finalize): `maxUploadBytes` is what the
 * deployment accepts (§13 item 1), `directUploadMaxBytes` what one request carries.
 */
export const PLATFORM_MAX_UPLOAD_BYTES = 4_194_304;

/**
 * Whether the deployment sets the instance secret (OPENGRAM_INSTANCE_SECRET, or the stack's
 * SECRET#INSTANCE item): it then overrides the stored configuration on every read (§12.2), so a
 * secret changed through PATCH /config/admin never takes effect (docs/divergences.md "Settings
 * without rawConfig").
 */
function instanceSecretSetByDeployment(): boolean {
  const e = env();
  return Boolean(e.OPENGRAM_INSTANCE_SECRET?.trim()) || Boolean(e.INSTANCE_SECRET_IN_TABLE);
}

/**
 * GET /config's body: never a secret. `hasEnvKey`: whether one of the provider's key variables is
 * set. `security.secretSetByDeployment: true` (this project's extension) when the deployment sets
 * the instance secret, so a settings screen does not offer a rotation that cannot take effect.
 */
export function publicConfig(config: InstanceConfig) {
  const { server, security, push, autoRename } = config;
  const e = env();
  return {
    appName: config.appName,
    maxUploadBytes: config.maxUploadBytes,
    directUploadMaxBytes: Math.min(config.maxUploadBytes, PLATFORM_MAX_UPLOAD_BYTES),
    allowedMimeTypes: config.allowedMimeTypes,
    titleMaxChars: config.titleMaxChars,
    ...(config.defaultModelIdForNewChats !== undefined
      ? { defaultModelIdForNewChats: config.defaultModelIdForNewChats }
      : {}),
    agents: config.agents,
    models: config.models,
    push: { enabled: push.enabled, vapidPublicKey: push.vapidPublicKey || null, subject: push.subject || null },
    security: {
      instanceSecretEnabled: security.instanceSecretEnabled,
      readEndpointsRequireInstanceSecret: security.readEndpointsRequireInstanceSecret,
      ...(instanceSecretSetByDeployment() ? { secretSetByDeployment: true as const } : {}),
    },
    server: {
      publicBaseUrl: server.publicBaseUrl,
      port: server.port,
      streamTimeoutSeconds: server.streamTimeoutSeconds,
      idempotencyTtlSeconds: server.idempotencyTtlSeconds,
      dispatch: server.dispatch,
    },
    hooks: config.hooks.map((h) => ({
      url: h.url,
      events: h.events,
      timeoutMs: h.timeoutMs ?? 5000,
      maxRetries: h.maxRetries ?? 3,
      // This project's extension (docs/divergences.md "Settings without rawConfig"): whether they
      // are stored, never what.
      hasSigningSecret: Boolean(h.signingSecret),
      hasHeaders: Object.keys(h.headers ?? {}).length > 0,
    })),
    autoRename: autoRename
      ? {
          enabled: autoRename.enabled,
          provider: autoRename.provider,
          modelId: autoRename.modelId,
          hasApiKey: Boolean(autoRename.apiKey),
        }
      : null,
    autoRenameProviders: RENAME_PROVIDERS.map((p) => ({
      id: p.id,
      name: p.name,
      envVar: p.envVars[0],
      hasEnvKey: p.envVars.some((v) => Boolean(e[v])),
      cheapModels: CHEAP_MODELS[p.id],
    })),
  };
}
