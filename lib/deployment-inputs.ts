/**
 * The deployer's inputs to the stack (bin/app.ts's `-c` values and the instance configuration),
 * checked and turned into what the stack builds from: the configuration closed unless open access
 * is asked for, stripped of its secrets and sized for Lambda's environment; the functions' log
 * level and sampling; API Gateway's stage throttle. An input the stack cannot use throws
 * DeploymentConfigError, whose message bin/app.ts prints before it stops.
 */
import { VAPID_KEY_HELD_APART, resolveConfig } from '../functions/platform/instance-config.js';
import type { InstanceConfig } from '../functions/platform/instance-config.js';

/**
 * The configuration as a closed deployment serves it: the instance secret on and required by
 * every route but the public ones, reads included (contract §1.11). Unchanged with allowOpenAccess.
 */
export function closedConfig(config: InstanceConfig): InstanceConfig {
  return {
    ...config,
    security: { ...config.security, instanceSecretEnabled: true, readEndpointsRequireInstanceSecret: true },
  };
}

export interface ApiThrottle {
  /** Steady-state requests per second. */
  rateLimit: number;
  /** Requests accepted at once above the steady rate (the token bucket's size). */
  burstLimit: number;
}

/**
 * Default stage throttle: far above what a few agents, workers and browser tabs send (each
 * client's writes are limited to 100 a second by the functions, §1.12), low enough to cap what
 * a flood can cost: 50 requests a second held for a day is 4.3 M requests, about $4.3 of API
 * Gateway plus the functions' time, instead of an unbounded bill. `-c apiThrottleRate=` and
 * `-c apiThrottleBurst=` change it.
 */
export const DEFAULT_API_THROTTLE: ApiThrottle = { rateLimit: 50, burstLimit: 100 };

/**
 * What validation sees for the VAPID public key before the deploy makes it (the key custom
 * resource, web-push.ts): with push enabled, a configuration is valid with a key pair only.
 */
export const DEPLOY_TIME_VAPID_KEY = '(made on deploy)';

/** A deployment input the stack cannot use; bin/app.ts prints its message and stops. */
export class DeploymentConfigError extends Error {}

/**
 * Lambda allows 4 KB of environment in total, measured as the variables' JSON object, so the
 * configuration counts as a JSON string (its quotes escaped). This leaves about 1,050 bytes for
 * the other variables of the fullest function, the flush consumer (version, logging, table name,
 * the stored secrets' names, the state machine ARN for its stream checks, both dispatch queue
 * URLs), once CloudFormation resolves them; the bounds are in test/infra/stack.test.ts
 * ("configuration size").
 */
export const INSTANCE_CONFIG_MAX_BYTES = 3050;

/**
 * INSTANCE_CONFIG, the configuration every function receives: deployableConfig as JSON, refused
 * past INSTANCE_CONFIG_MAX_BYTES.
 */
export function instanceConfigVariable(config: InstanceConfig, instanceSecretInTable: boolean): string {
  const instanceConfig = JSON.stringify(deployableConfig(config, instanceSecretInTable));
  const instanceConfigBytes = Buffer.byteLength(JSON.stringify(instanceConfig));
  if (instanceConfigBytes > INSTANCE_CONFIG_MAX_BYTES) {
    throw new DeploymentConfigError(
      `The instance configuration is ${instanceConfigBytes} bytes once its secrets are removed (as Lambda counts ` +
        `it, quotes escaped); ` +
        `functions receive it as an environment variable, which leaves room for ${INSTANCE_CONFIG_MAX_BYTES} ` +
        `bytes (Lambda's limit is 4 KB in total).`,
    );
  }
  return instanceConfig;
}

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/** The functions' logging variables from the stack props (defaults WARN, 1%). */
export function loggingEnvironment(level: string | undefined, sampleRate: string | number | undefined) {
  const chosen = (level ?? 'WARN').toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(chosen)) {
    throw new DeploymentConfigError(`logLevel must be one of ${LOG_LEVELS.join(', ')}, got "${level}".`);
  }
  const rate = sampleRate === undefined || sampleRate === '' ? 0.01 : Number(sampleRate);
  if (!Number.isFinite(rate) || rate < 0 || rate > 1) {
    throw new DeploymentConfigError(`logSampleRate must be a number from 0 to 1, got "${sampleRate}".`);
  }
  // LOG_LEVEL: Powertools' shorter alias of POWERTOOLS_LOG_LEVEL (every byte counts: Lambda's 4 KB).
  return { LOG_LEVEL: chosen, POWERTOOLS_LOGGER_SAMPLE_RATE: String(rate) };
}

/** The stage throttle from the stack props: whole numbers of at least 1, the burst at least the rate. */
export function apiThrottle(rate: string | number | undefined, burst: string | number | undefined): ApiThrottle {
  const read = (value: string | number | undefined, fallback: number, name: string) => {
    if (value === undefined || value === '') return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1) {
      throw new DeploymentConfigError(`${name} must be a whole number of at least 1, got "${value}".`);
    }
    return n;
  };
  const rateLimit = read(rate, DEFAULT_API_THROTTLE.rateLimit, 'apiThrottleRate');
  const burstLimit = read(burst, Math.max(DEFAULT_API_THROTTLE.burstLimit, rateLimit), 'apiThrottleBurst');
  if (burstLimit < rateLimit) {
    throw new DeploymentConfigError(
      `apiThrottleBurst (${burstLimit}) must be at least apiThrottleRate (${rateLimit}): the burst is the ` +
        'requests accepted at once.',
    );
  }
  return { rateLimit, burstLimit };
}

/**
 * The configuration as the functions receive it in INSTANCE_CONFIG: every secret removed
 * (instance secret, VAPID private key, auto-rename API key, hook signing secrets and hook
 * headers, which often carry credentials). The instance secret reaches the functions that check
 * auth through the table instead (SECRET#INSTANCE, read as the OPENGRAM_INSTANCE_SECRET override).
 *
 * Throws when the stripped document would not validate at run time the way the functions
 * resolve it, so a configuration that needs a removed secret (push enabled with its VAPID
 * private key) fails the synth instead of every request.
 */
export function deployableConfig(config: InstanceConfig, instanceSecretInTable: boolean): Record<string, unknown> {
  const copy = structuredClone(config);
  const { instanceSecret: _instanceSecret, ...security } = copy.security;
  const ownPrivateKey = config.push.vapidPrivateKey !== '' && config.push.vapidPrivateKey !== VAPID_KEY_HELD_APART;
  if (config.push.enabled && ownPrivateKey) {
    throw new DeploymentConfigError(
      'The configuration names a VAPID key pair, which would put its private key in the template. Remove both ' +
        'keys: the stack makes a pair once in its table, or keeps the one you put in the SECRET#VAPID item as ' +
        '{"publicKey","privateKey"} (docs/deployment.md, "Secrets in the table").',
    );
  }
  // The key pair is held apart (the table's SECRET#VAPID item); the functions get the public key as VAPID_PUBLIC_KEY.
  const { vapidPrivateKey: _vapidPrivateKey, vapidPublicKey: _vapidPublicKey, ...push } = copy.push;
  Object.assign(copy, {
    security,
    push,
    hooks: copy.hooks.map(({ signingSecret: _signingSecret, headers: _headers, ...hook }) => hook),
  });
  if (copy.autoRename) {
    const { apiKey: _apiKey, ...autoRename } = copy.autoRename;
    copy.autoRename = autoRename;
  }
  try {
    resolveConfig(copy, {
      OPENGRAM_INSTANCE_SECRET: instanceSecretInTable ? 'from-the-table' : undefined,
      VAPID_PUBLIC_KEY: DEPLOY_TIME_VAPID_KEY,
    });
  } catch (error) {
    throw new DeploymentConfigError(
      `The configuration is valid, but not once its secrets are removed for deployment: ${(error as Error).message} ` +
        'Secrets never go into the template, and the functions have no other source yet for any secret but the ' +
        'instance secret.',
    );
  }
  return copy;
}
