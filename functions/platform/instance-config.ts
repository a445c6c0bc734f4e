/**
 * The instance configuration document (contract §12): one zod schema holds its shape, its
 * defaults (§12.1) and its validation rules (§12.3), and yields the InstanceConfig type;
 * resolveConfig adds the deployment overrides (§12.2). The pure half of the instance
 * configuration: it never touches the environment or AWS itself, so the stack (lib/stack.ts,
 * bin/app.ts) and the platform use it too. Its live half, core/instance-config.ts, decides which
 * document is in force and where the overrides and the secret come from.
 */
import { PROVIDER_IDS } from '../model/rename-providers.js';
import * as z from './zod.js';

export const DISPATCH_MODES = ['immediate', 'sequential', 'batched_sequential'] as const;
export const AUTO_RENAME_PROVIDERS = PROVIDER_IDS;

export class ConfigValidationError extends Error {
  constructor(rule: string) {
    super(`Config validation error: ${rule}`);
  }
}

/** The broken rule of one CORS origin entry, or its origin form. */
function checkOrigin(entry: unknown): { origin: string } | { rule: string } {
  if (typeof entry !== 'string' || entry.trim() === '') {
    return { rule: 'server.corsOrigins entries must be non-empty strings.' };
  }
  const text = entry.trim();
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { rule: `server.corsOrigins entry "${text}" is not a valid URL.` };
  }
  const plainOrigin =
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.pathname === '/' &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    !text.includes('*');
  if (!plainOrigin) {
    return {
      rule: `server.corsOrigins entry "${text}" must be an http or https origin without path, query or fragment.`,
    };
  }
  return { origin: url.origin };
}

/** Normalizes one CORS origin entry to its origin form, or throws. */
export function normalizeOrigin(entry: unknown): string {
  const checked = checkOrigin(entry);
  if ('rule' in checked) throw new ConfigValidationError(checked.rule);
  return checked.origin;
}

// Every object keeps the keys it does not know, as given (§5.2.2); nested objects default
// key by key (`prefault({})` runs their own defaults), arrays and scalars replace defaults.
const count = (min: number, ...checks: z.core.$ZodCheck<number>[]) => z.number().check(z.int(), z.gte(min), ...checks);
const ms = (value: number) => z._default(count(0), value);
const optionalString = z.optional(z.string());
const stringMap = z.optional(z.record(z.string(), z.string()));

const Agent = z.looseObject({
  id: z.string().check(z.minLength(1)),
  name: z.string(),
  description: z.string(),
  avatarUrl: optionalString,
  defaultModelId: optionalString,
});
const Model = z.looseObject({
  id: z.string().check(z.minLength(1)),
  name: z.string(),
  description: z.string(),
  metadata: stringMap,
});
const Hook = z.looseObject({
  url: z.string().check(z.minLength(1)),
  events: z.array(z.string()),
  headers: stringMap,
  signingSecret: optionalString,
  timeoutMs: z.optional(count(1)),
  maxRetries: z.optional(count(0)),
});
const AutoRename = z.looseObject({
  enabled: z.boolean(),
  provider: z.string(),
  modelId: z.string(),
  apiKey: optionalString,
});

const Execution = z.looseObject({
  autoscaleEnabled: z._default(z.boolean(), true),
  minConcurrency: z._default(count(1), 2),
  maxConcurrency: z._default(count(0), 10),
  scaleCooldownMs: ms(5000),
});
const Dispatch = z.looseObject({
  mode: z._default(z.enum(DISPATCH_MODES), 'batched_sequential'),
  batchDebounceMs: ms(600),
  typingGraceMs: ms(2000),
  maxBatchWaitMs: ms(30_000),
  schedulerTickMs: ms(500),
  leaseMs: ms(30_000),
  heartbeatIntervalMs: ms(5000),
  claimWaitMs: ms(10_000),
  retryBaseMs: ms(500),
  retryMaxMs: ms(30_000),
  maxAttempts: z._default(count(1), 8),
  execution: z.prefault(Execution, {}),
  claim: z.prefault(z.looseObject({ claimManyLimit: z._default(count(1), 10) }), {}),
});

const Push = z.looseObject({
  enabled: z._default(z.boolean(), false),
  vapidPublicKey: z._default(z.string(), ''),
  vapidPrivateKey: z._default(z.string(), ''),
  subject: z._default(z.string(), ''),
});
const Security = z.looseObject({
  instanceSecretEnabled: z._default(z.boolean(), false),
  instanceSecret: z._default(z.string(), ''),
  readEndpointsRequireInstanceSecret: z._default(z.boolean(), false),
});
const Server = z.looseObject({
  publicBaseUrl: z._default(z.string(), 'http://localhost:3000'),
  port: z._default(count(1, z.lte(65_535)), 3000),
  streamTimeoutSeconds: z._default(count(1), 60),
  // Any entries: the rules below name the broken one; the output holds origins only.
  corsOrigins: z._default(z.array(z.custom<string>()), () => []),
  idempotencyTtlSeconds: z._default(count(1), 86_400),
  dispatch: z.prefault(Dispatch, {}),
});

const Document = z.looseObject({
  appName: z._default(z.string(), 'OpenGram'),
  maxUploadBytes: z._default(count(1), 50_000_000),
  allowedMimeTypes: z._default(z.array(z.string()), () => ['*/*']),
  titleMaxChars: z._default(count(1), 48),
  defaultModelIdForNewChats: optionalString,
  agents: z._default(z.array(Agent), () => [
    {
      id: 'agent-default',
      name: 'Default Agent',
      description: 'Default local development agent.',
      defaultModelId: 'model-default',
    },
  ]),
  models: z._default(z.array(Model), () => [
    { id: 'model-default', name: 'Default Model', description: 'Default local development model.' },
  ]),
  push: z.prefault(Push, {}),
  security: z.prefault(Security, {}),
  server: z.prefault(Server, {}),
  hooks: z._default(z.array(Hook), () => []),
  autoRename: z._default(z.nullable(AutoRename), null),
});

/** The §12.3 rules across fields, checked in order once the shape holds; the first broken one is reported. */
function firstBrokenRule(config: z.output<typeof Document>): string | undefined {
  if (config.models.length === 0) return 'at least one model is required.';
  if (config.agents.length === 0) return 'at least one agent is required.';
  const modelIds = new Set(config.models.map((m) => m.id));
  if (config.defaultModelIdForNewChats !== undefined && !modelIds.has(config.defaultModelIdForNewChats)) {
    return 'defaultModelIdForNewChats must match a configured model id.';
  }
  const agent = config.agents.find((a) => a.defaultModelId !== undefined && !modelIds.has(a.defaultModelId));
  if (agent) return `agent "${agent.id}" defaultModelId must match a configured model id.`;
  if (config.security.instanceSecretEnabled && config.security.instanceSecret === '') {
    return 'security.instanceSecret is required when instanceSecretEnabled is true.';
  }
  const { enabled, vapidPublicKey, vapidPrivateKey, subject } = config.push;
  if (enabled && (!vapidPublicKey || !vapidPrivateKey || !subject)) {
    return 'push.enabled requires vapidPublicKey, vapidPrivateKey and subject.';
  }
  if (enabled && subject.includes('localhost')) return 'push.subject must not contain localhost.';
  for (const entry of config.server.corsOrigins) {
    const checked = checkOrigin(entry);
    if ('rule' in checked) return checked.rule;
  }
  const exec = config.server.dispatch.execution;
  if (exec.maxConcurrency < Math.max(1, exec.minConcurrency)) {
    return 'server.dispatch.execution.maxConcurrency must be at least minConcurrency.';
  }
  const rename = config.autoRename;
  if (rename?.enabled) {
    if (!(AUTO_RENAME_PROVIDERS as readonly string[]).includes(rename.provider)) {
      return `autoRename.provider must be one of ${AUTO_RENAME_PROVIDERS.join(', ')}.`;
    }
    if (rename.modelId.trim() === '') return 'autoRename.modelId must be a non-empty string.';
  }
  return undefined;
}

const InstanceConfigSchema = z.pipe(
  Document.check(
    z.superRefine((config, ctx) => {
      const rule = firstBrokenRule(config);
      if (rule !== undefined) ctx.addIssue({ code: 'custom', message: rule });
    }),
  ),
  z.transform((config: z.output<typeof Document>) => {
    config.server.corsOrigins = [...new Set(config.server.corsOrigins.map(normalizeOrigin))];
    return config;
  }),
);

export type InstanceConfig = z.output<typeof InstanceConfigSchema>;
export type AgentConfig = InstanceConfig['agents'][number];
export type ModelConfig = InstanceConfig['models'][number];
export type HookConfig = InstanceConfig['hooks'][number];
export type DispatchConfig = InstanceConfig['server']['dispatch'];
export type AutoRenameConfig = NonNullable<InstanceConfig['autoRename']>;

export function defaultConfig(): InstanceConfig {
  return InstanceConfigSchema.parse({});
}

/** The deployment parameters of §12.2 that shape the document. */
export interface ConfigOverrides {
  OPENGRAM_INSTANCE_SECRET?: string | undefined;
  OPENGRAM_PUBLIC_BASE_URL?: string | undefined;
  OPENGRAM_CORS_ORIGINS?: string | undefined;
  OPENGRAM_SERVER_PORT?: string | undefined;
  /**
   * The VAPID public key when the key pair is held apart from the document (§7.7: a secret in
   * AWS, a file locally). Used when the document names no key pair of its own; the private
   * key field then holds VAPID_KEY_HELD_APART and only the push sender reads the real one.
   */
  VAPID_PUBLIC_KEY?: string | undefined;
}

/** The private-key field's value when the key pair is held apart (core/push-keys.ts reads it). */
export const VAPID_KEY_HELD_APART = '(held apart)';

/**
 * The instance secret as a function that may not read it sees it (a job or a public route of a
 * deployed stack, core/instance-config.ts): the configuration resolves, and middleware/auth.ts refuses
 * to compare a request against it (a 500, never a match).
 */
export const INSTANCE_SECRET_UNREADABLE = '(not readable here)';

/** §7.7 subject derivation: the public base URL, else the first CORS origin, if HTTPS. */
function derivedSubject(server: Record<string, unknown>): string {
  const base = typeof server.publicBaseUrl === 'string' ? server.publicBaseUrl : '';
  if (base.startsWith('https://')) return base;
  const origins = Array.isArray(server.corsOrigins) ? server.corsOrigins : [];
  const origin = origins.find((o): o is string => typeof o === 'string' && o.startsWith('https://'));
  return origin ?? 'mailto:opengram@localhost';
}

/** Push enabled: fills a key pair held apart and derives an empty subject (§7.7, §12.3). */
function withPushDefaults(raw: Record<string, unknown>, publicKey: string | undefined): Record<string, unknown> {
  const push = raw.push;
  if (!isObject(push) || push.enabled !== true) return raw;
  const server = isObject(raw.server) ? raw.server : {};
  const ownKeys = Boolean(push.vapidPublicKey) || Boolean(push.vapidPrivateKey);
  const keys = !ownKeys && publicKey ? { vapidPublicKey: publicKey, vapidPrivateKey: VAPID_KEY_HELD_APART } : {};
  const subject = push.subject ? {} : { subject: derivedSubject(server) };
  return { ...raw, push: { ...push, ...keys, ...subject } };
}

/** A JSON object (not an array, not null): what a document and each of its sections must be. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const nonBlank = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v : undefined);

/** Sets fields of a nested object of the raw document; a value that is no object is left for the schema to reject. */
const patch = (value: unknown, fields: Record<string, unknown>): unknown =>
  Object.keys(fields).length === 0 || (value !== undefined && !isObject(value)) ? value : { ...value, ...fields };

/** The raw document with the §12.2 deployment overrides written into it. */
function withOverrides(raw: Record<string, unknown>, overrides: ConfigOverrides): Record<string, unknown> {
  const secret = nonBlank(overrides.OPENGRAM_INSTANCE_SECRET);
  const baseUrl = nonBlank(overrides.OPENGRAM_PUBLIC_BASE_URL)?.trim();
  const origins = (overrides.OPENGRAM_CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  const portText = nonBlank(overrides.OPENGRAM_SERVER_PORT);
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65_535)) {
    throw new ConfigValidationError('OPENGRAM_SERVER_PORT must be an integer from 1 to 65535.');
  }
  const server = {
    ...(baseUrl !== undefined ? { publicBaseUrl: baseUrl } : {}),
    ...(origins.length > 0 ? { corsOrigins: origins } : {}),
    ...(port !== undefined ? { port } : {}),
  };
  const security = secret !== undefined ? { instanceSecret: secret, instanceSecretEnabled: true } : {};
  const withServer = { ...raw, security: patch(raw.security, security), server: patch(raw.server, server) };
  return withPushDefaults(withServer, nonBlank(overrides.VAPID_PUBLIC_KEY));
}

function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue?.code === 'custom') return issue.message;
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
  const result = InstanceConfigSchema.safeParse(withOverrides(raw ?? {}, overrides));
  if (!result.success) throw new ConfigValidationError(describeIssue(result.error.issues[0]));
  return result.data;
}
