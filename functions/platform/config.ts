/**
 * What the deployment says about the instance configuration: the deployed raw document arrives
 * in INSTANCE_CONFIG (JSON, never holding secrets in a deployed stack), whether the deployment
 * sets the instance secret, the write rate limit's parameters. Every variable comes through
 * platform/env.ts (read once per container; tests that change the configuration reload it
 * there). core/live-config.ts resolves the configuration in effect from it (the §12.2 overrides,
 * the instance secret kept in the table, an administrator's stored document).
 */
import { env } from './env.js';

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
