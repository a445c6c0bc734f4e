/**
 * The instance configuration document (contract §12): defaults, deployment overrides
 * (§12.2) and validation (§12.3). Pure: it never touches the environment or AWS itself;
 * platform/settings.ts decides where the raw document and the secret come from.
 */
import { z } from 'zod';

export const DISPATCH_MODES = ['immediate', 'sequential', 'batched_sequential'] as const;
export const AUTO_RENAME_PROVIDERS = ['anthropic', 'openai', 'google', 'xai', 'openrouter'] as const;

export interface AgentConfig {
  id: string;
  name: string;
  description: string;
  avatarUrl?: string;
  defaultModelId?: string;
  [key: string]: unknown;
}
export interface ModelConfig {
  id: string;
  name: string;
  description: string;
  metadata?: Record<string, string>;
  [key: string]: unknown;
}
export interface HookConfig {
  url: string;
  events: string[];
  headers?: Record<string, string>;
  signingSecret?: string;
  timeoutMs?: number;
  maxRetries?: number;
}
export interface DispatchConfig {
  mode: (typeof DISPATCH_MODES)[number];
  batchDebounceMs: number;
  typingGraceMs: number;
  maxBatchWaitMs: number;
  schedulerTickMs: number;
  leaseMs: number;
  heartbeatIntervalMs: number;
  claimWaitMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxAttempts: number;
  execution: { autoscaleEnabled: boolean; minConcurrency: number; maxConcurrency: number; scaleCooldownMs: number };
  claim: { claimManyLimit: number };
}
export interface AutoRenameConfig {
  enabled: boolean;
  provider: string;
  modelId: string;
  apiKey?: string;
}
export interface InstanceConfig {
  appName: string;
  maxUploadBytes: number;
  allowedMimeTypes: string[];
  titleMaxChars: number;
  defaultModelIdForNewChats?: string;
  agents: AgentConfig[];
  models: ModelConfig[];
  push: { enabled: boolean; vapidPublicKey: string; vapidPrivateKey: string; subject: string };
  security: { instanceSecretEnabled: boolean; instanceSecret: string; readEndpointsRequireInstanceSecret: boolean };
  server: {
    publicBaseUrl: string;
    port: number;
    streamTimeoutSeconds: number;
    corsOrigins: string[];
    idempotencyTtlSeconds: number;
    dispatch: DispatchConfig;
  };
  hooks: HookConfig[];
  autoRename: AutoRenameConfig | null;
  /** Keys the service does not know are kept as given (§5.2.2). */
  [key: string]: unknown;
}

export function defaultConfig(): InstanceConfig {
  return {
    appName: 'OpenGram',
    maxUploadBytes: 50_000_000,
    allowedMimeTypes: ['*/*'],
    titleMaxChars: 48,
    agents: [
      {
        id: 'agent-default',
        name: 'Default Agent',
        description: 'Default local development agent.',
        defaultModelId: 'model-default',
      },
    ],
    models: [{ id: 'model-default', name: 'Default Model', description: 'Default local development model.' }],
    push: { enabled: false, vapidPublicKey: '', vapidPrivateKey: '', subject: '' },
    security: { instanceSecretEnabled: false, instanceSecret: '', readEndpointsRequireInstanceSecret: false },
    server: {
      publicBaseUrl: 'http://localhost:3000',
      port: 3000,
      streamTimeoutSeconds: 60,
      corsOrigins: [],
      idempotencyTtlSeconds: 86_400,
      dispatch: {
        mode: 'batched_sequential',
        batchDebounceMs: 600,
        typingGraceMs: 2000,
        maxBatchWaitMs: 30_000,
        schedulerTickMs: 500,
        leaseMs: 30_000,
        heartbeatIntervalMs: 5000,
        claimWaitMs: 10_000,
        retryBaseMs: 500,
        retryMaxMs: 30_000,
        maxAttempts: 8,
        execution: { autoscaleEnabled: true, minConcurrency: 2, maxConcurrency: 10, scaleCooldownMs: 5000 },
        claim: { claimManyLimit: 10 },
      },
    },
    hooks: [],
    autoRename: null,
  };
}

export class ConfigValidationError extends Error {
  constructor(rule: string) {
    super(`Config validation error: ${rule}`);
  }
}

/** The deployment parameters of §12.2 that shape the document. */
export interface ConfigOverrides {
  OPENGRAM_INSTANCE_SECRET?: string | undefined;
  OPENGRAM_PUBLIC_BASE_URL?: string | undefined;
  OPENGRAM_CORS_ORIGINS?: string | undefined;
  OPENGRAM_SERVER_PORT?: string | undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nested objects merge key by key with their defaults; arrays and scalars replace them. */
function mergeDefaults(defaults: Record<string, unknown>, given: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...defaults };
  for (const [key, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const base = defaults[key];
    out[key] = isObject(base) && isObject(value) ? mergeDefaults(base, value) : value;
  }
  return out;
}

/** Normalizes one CORS origin entry to its origin form, or throws. */
export function normalizeOrigin(entry: unknown): string {
  if (typeof entry !== 'string' || entry.trim() === '') {
    throw new ConfigValidationError('server.corsOrigins entries must be non-empty strings.');
  }
  const text = entry.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigValidationError(`server.corsOrigins entry "${text}" is not a valid URL.`);
  }
  if (
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    text.includes('*')
  ) {
    throw new ConfigValidationError(
      `server.corsOrigins entry "${text}" must be an http or https origin without path, query or fragment.`,
    );
  }
  return url.origin;
}

const nonNegativeInt = z.number().int().min(0);
const DispatchRules = z.object({
  mode: z.enum(DISPATCH_MODES),
  batchDebounceMs: nonNegativeInt,
  typingGraceMs: nonNegativeInt,
  maxBatchWaitMs: nonNegativeInt,
  schedulerTickMs: nonNegativeInt,
  leaseMs: nonNegativeInt,
  heartbeatIntervalMs: nonNegativeInt,
  claimWaitMs: nonNegativeInt,
  retryBaseMs: nonNegativeInt,
  retryMaxMs: nonNegativeInt,
  maxAttempts: z.number().int().min(1),
  execution: z.object({
    autoscaleEnabled: z.boolean(),
    minConcurrency: z.number().int().min(1),
    maxConcurrency: nonNegativeInt,
    scaleCooldownMs: nonNegativeInt,
  }),
  claim: z.object({ claimManyLimit: z.number().int().min(1) }),
});
const Named = z.object({ id: z.string().min(1), name: z.string(), description: z.string() });
const ShapeRules = z.object({
  appName: z.string(),
  maxUploadBytes: z.number().int().min(1),
  allowedMimeTypes: z.array(z.string()),
  titleMaxChars: z.number().int().min(1),
  defaultModelIdForNewChats: z.string().optional(),
  agents: z.array(Named.extend({ avatarUrl: z.string().optional(), defaultModelId: z.string().optional() }).passthrough()),
  models: z.array(Named.extend({ metadata: z.record(z.string(), z.string()).optional() }).passthrough()),
  push: z.object({ enabled: z.boolean(), vapidPublicKey: z.string(), vapidPrivateKey: z.string(), subject: z.string() }),
  security: z.object({
    instanceSecretEnabled: z.boolean(),
    instanceSecret: z.string(),
    readEndpointsRequireInstanceSecret: z.boolean(),
  }),
  server: z.object({
    publicBaseUrl: z.string(),
    port: z.number().int().min(1).max(65_535),
    streamTimeoutSeconds: z.number().int().min(1),
    corsOrigins: z.array(z.unknown()),
    idempotencyTtlSeconds: z.number().int().min(1),
    dispatch: DispatchRules,
  }),
  hooks: z.array(
    z.object({
      url: z.string().min(1),
      events: z.array(z.string()),
      headers: z.record(z.string(), z.string()).optional(),
      signingSecret: z.string().optional(),
      timeoutMs: z.number().int().min(1).optional(),
      maxRetries: z.number().int().min(0).optional(),
    }),
  ),
  autoRename: z
    .object({ enabled: z.boolean(), provider: z.string(), modelId: z.string(), apiKey: z.string().optional() })
    .nullable(),
});

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue?.path.join('.') || 'config';
  return `${path}: ${issue?.message ?? 'invalid value'}`;
}

/**
 * Builds the effective configuration: defaults ← raw document ← deployment overrides,
 * then validates it. Throws ConfigValidationError naming the first broken rule.
 */
export function resolveConfig(raw: unknown, overrides: ConfigOverrides = {}): InstanceConfig {
  if (raw !== undefined && raw !== null && !isObject(raw)) {
    throw new ConfigValidationError('the configuration must be a JSON object.');
  }
  const merged = mergeDefaults(defaultConfig() as unknown as Record<string, unknown>, raw ?? {});
  if (merged.autoRename === undefined) merged.autoRename = null;
  const config = merged as unknown as InstanceConfig;

  const secret = overrides.OPENGRAM_INSTANCE_SECRET;
  if (secret !== undefined && secret.trim() !== '') {
    config.security = { ...config.security, instanceSecret: secret, instanceSecretEnabled: true };
  }
  const baseUrl = overrides.OPENGRAM_PUBLIC_BASE_URL;
  if (baseUrl !== undefined && baseUrl.trim() !== '') {
    config.server = { ...config.server, publicBaseUrl: baseUrl.trim() };
  }
  const origins = (overrides.OPENGRAM_CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  if (origins.length > 0) config.server = { ...config.server, corsOrigins: origins };
  const port = overrides.OPENGRAM_SERVER_PORT;
  if (port !== undefined && port.trim() !== '') {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) {
      throw new ConfigValidationError('OPENGRAM_SERVER_PORT must be an integer from 1 to 65535.');
    }
    config.server = { ...config.server, port: n };
  }

  const shape = ShapeRules.safeParse(config);
  if (!shape.success) throw new ConfigValidationError(firstIssue(shape.error));

  if (config.models.length === 0) throw new ConfigValidationError('at least one model is required.');
  if (config.agents.length === 0) throw new ConfigValidationError('at least one agent is required.');
  const modelIds = new Set(config.models.map((m) => m.id));
  if (config.defaultModelIdForNewChats !== undefined && !modelIds.has(config.defaultModelIdForNewChats)) {
    throw new ConfigValidationError('defaultModelIdForNewChats must match a configured model id.');
  }
  for (const agent of config.agents) {
    if (agent.defaultModelId !== undefined && !modelIds.has(agent.defaultModelId)) {
      throw new ConfigValidationError(`agent "${agent.id}" defaultModelId must match a configured model id.`);
    }
  }
  if (config.security.instanceSecretEnabled && config.security.instanceSecret === '') {
    throw new ConfigValidationError('security.instanceSecret is required when instanceSecretEnabled is true.');
  }
  if (config.push.enabled) {
    const { vapidPublicKey, vapidPrivateKey, subject } = config.push;
    if (!vapidPublicKey || !vapidPrivateKey || !subject) {
      throw new ConfigValidationError('push.enabled requires vapidPublicKey, vapidPrivateKey and subject.');
    }
    if (subject.includes('localhost')) throw new ConfigValidationError('push.subject must not contain localhost.');
  }
  config.server.corsOrigins = [...new Set(config.server.corsOrigins.map(normalizeOrigin))];
  const exec = config.server.dispatch.execution;
  if (exec.maxConcurrency < Math.max(1, exec.minConcurrency)) {
    throw new ConfigValidationError('server.dispatch.execution.maxConcurrency must be at least minConcurrency.');
  }
  const rename = config.autoRename;
  if (rename?.enabled) {
    if (!(AUTO_RENAME_PROVIDERS as readonly string[]).includes(rename.provider)) {
      throw new ConfigValidationError(`autoRename.provider must be one of ${AUTO_RENAME_PROVIDERS.join(', ')}.`);
    }
    if (rename.modelId.trim() === '') throw new ConfigValidationError('autoRename.modelId must be a non-empty string.');
  }
  return config;
}
