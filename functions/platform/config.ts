/**
 * Resolving the instance configuration. The deployed raw document arrives in INSTANCE_CONFIG
 * (JSON, never holding secrets in a deployed stack); the instance secret comes from the table's
 * SECRET#INSTANCE item when INSTANCE_SECRET_IN_TABLE is set (store/secrets-repo.ts: one read per
 * container, kept 5 minutes) — for the functions that check auth; the others, which may not read
 * it, resolve with INSTANCE_SECRET_UNREADABLE, which middleware/auth.ts never compares against.
 * Every variable comes through platform/env.ts (read once per container; tests that change
 * the configuration reload it there). §12.2 overrides are applied on every read; the parsed
 * result is memoized per input. core/live-config.ts decides which document is live (an
 * administrator's stored one wins over the deployed one).
 */
import { mayReadStoredSecret, requiredStoredSecret } from '../store/secrets-repo.js';
import { env } from './env.js';
import { INSTANCE_SECRET_UNREADABLE, resolveConfig } from './instance-config.js';
import type { ConfigOverrides, InstanceConfig } from './instance-config.js';

let memo: { key: string; config: InstanceConfig } | undefined;

/** The instance secret kept in the table, when the stack keeps it there (INSTANCE_SECRET_IN_TABLE). */
async function tableInstanceSecret(): Promise<string | undefined> {
  if (!env().INSTANCE_SECRET_IN_TABLE) return undefined;
  if (!mayReadStoredSecret('INSTANCE')) return INSTANCE_SECRET_UNREADABLE;
  // Fail closed: without its item, a secret-protected instance must not resolve as an open one.
  return requiredStoredSecret('INSTANCE');
}

/**
 * Whether the deployment sets the instance secret (OPENGRAM_INSTANCE_SECRET, or the stack's
 * SECRET#INSTANCE item): it then overrides the stored configuration on every read (§12.2), so a
 * secret changed through PATCH /config/admin never takes effect (README "Settings without rawConfig").
 */
export function instanceSecretSetByDeployment(): boolean {
  const e = env();
  return Boolean(e.OPENGRAM_INSTANCE_SECRET?.trim()) || Boolean(e.INSTANCE_SECRET_IN_TABLE);
}

/** The document the deployment was given (INSTANCE_CONFIG), before any administrator change. */
export function deployedDocument(): Record<string, unknown> {
  const raw = env().INSTANCE_CONFIG ?? '';
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
}

/**
 * The effective configuration of a raw document: §12.1 defaults, the document, the §12.2
 * overrides, validated (§12.3; throws ConfigValidationError). `key` identifies the document for
 * the memo (the stored version, or the deployed text).
 */
export async function configFrom(document: unknown, key: string): Promise<InstanceConfig> {
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
export async function checkDocument(document: unknown): Promise<InstanceConfig> {
  return resolveConfig(document, await currentOverrides());
}

/** The deployed configuration (no administrator change): INSTANCE_CONFIG with the overrides. */
export const deployedConfig = (): Promise<InstanceConfig> =>
  configFrom(deployedDocument(), `deployed:${env().INSTANCE_CONFIG ?? ''}`);

/** §1.12 write rate limit parameters: positive numbers, floored; anything below 1 → default. */
export function rateLimitSettings(): { max: number; windowMs: number; trustProxyHeaders: boolean } {
  const positive = (value: string | undefined, fallback: number) => {
    const n = Math.floor(Number(value));
    return Number.isFinite(n) && n >= 1 ? n : fallback;
  };
  const e = env();
  return {
    max: positive(e.OPENGRAM_WRITE_RATE_LIMIT_MAX, 100),
    windowMs: positive(e.OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS, 1000),
    trustProxyHeaders: /^(1|true|yes)$/i.test(e.OPENGRAM_TRUST_PROXY_HEADERS ?? ''),
  };
}
