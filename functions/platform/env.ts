/**
 * The deployment environment: the variables the stack (lib/constructs/api-function.ts) or the
 * local runtime (`npm start`, local/server.ts) sets, and the one place that reads process.env.
 * The live instance configuration (the document an administrator may change) is
 * core/instance-config.ts; this module only hands it the deployed document and the §12.2 overrides.
 *
 * One schema of every variable, parsed once per process on the first env() call (handlers make
 * it while loading or on their first request, after the local runtime has set the variables):
 * a missing or malformed variable fails that call, and every later one, with one error naming
 * each of them. Variables only some functions need are optional here and checked where they are
 * used (requiredEnv: "DISPATCH_QUEUE_URL is not configured").
 *
 * The local runtime sets every variable, its emulators' endpoints included, before it mounts a
 * handler, so nothing differs between Lambda and local but the values. An empty variable counts
 * as unset.
 */
import { PROVIDER_IDS } from '../model/rename-providers.js';
import * as z from './zod.js';

const text = z.string().check(z.minLength(1));
const optionalText = z.optional(text);
const optionalUrl = z.optional(z.string().check(z.url()));
/** A whole number read from a variable's text. */
const count = (...checks: z.core.$ZodCheck<number>[]) => z.coerce.number().check(z.int(), ...checks);
/** A positive whole number, floored; anything else, a value below 1 included, takes `fallback` (§1.12). */
const positiveOr = (fallback: number) =>
  z.pipe(
    z._default(z.string(), ''),
    z.transform((text: string) => {
      const n = Math.floor(Number(text));
      return Number.isFinite(n) && n >= 1 ? n : fallback;
    }),
  );

const Env = z.object({
  TABLE_NAME: text,
  AWS_REGION: z._default(text, 'us-east-1'),
  /** Set by the Lambda runtime; absent locally. */
  AWS_LAMBDA_FUNCTION_NAME: optionalText,
  /** Local emulators (the local runtime only). */
  DYNAMODB_ENDPOINT: optionalUrl,
  SQS_ENDPOINT: optionalUrl,
  S3_ENDPOINT: optionalUrl,
  /**
   * The dispatch queues (platform/queues.ts): required by the functions that dispatch. The flush
   * queue also carries the delayed stream checks (platform/stream-timer.ts).
   */
  DISPATCH_QUEUE_URL: optionalText,
  FLUSH_QUEUE_URL: optionalText,
  /** The media bucket (platform/media-storage.ts): required by the media functions. */
  MEDIA_BUCKET: optionalText,
  /**
   * The path on the service's own origin that hands a presigned form upload on to the media bucket
   * (the local runtime forwards it to its S3): a page on that origin, whose CSP allows connections
   * to its own origin only, is given an upload session's `url` there (core/media-upload.ts).
   */
  MEDIA_UPLOAD_PATH: z.optional(z.string().check(z.regex(/^\/[A-Za-z0-9._~/-]*$/))),
  /** The search index bucket and the folder of its segments' local copies (platform/search-storage.ts). */
  SEARCH_BUCKET: optionalText,
  SEARCH_CACHE_DIR: optionalText,
  /**
   * The stream timers (platform/stream-timer.ts): the state machine a stream still active at its
   * check is handed to (the flush consumer, which runs the checks). The delayed checks go on the
   * flush queue (FLUSH_QUEUE_URL, given to the routes that create streams). Without them streams
   * expire lazily.
   */
  STREAM_TIMEOUT_STATE_MACHINE_ARN: optionalText,
  /** How long (ms) a function keeps the administrator's stored configuration before reading it again. */
  CONFIG_CACHE_MS: z._default(count(z.nonnegative()), 5_000),
  /** The instance configuration document (JSON, contract §12), without secrets in a deployed stack. */
  INSTANCE_CONFIG: z.optional(z.string()),
  /**
   * The stored secrets this function may read from the table (store/secrets-repo.ts storedSecret), a
   * comma-separated list of INSTANCE, ORIGIN_VERIFY, VAPID: the stack sets it with the matching IAM
   * grant. Unset (the local runtime): none; ORIGIN_VERIFY unlisted means there is no edge to verify.
   */
  STORED_SECRETS: optionalText,
  /**
   * Set (to 1) by the stack when the instance secret is on and kept in the table: a function that
   * may not read it (a job, a public route) resolves the configuration with INSTANCE_SECRET_UNREADABLE.
   */
  INSTANCE_SECRET_IN_TABLE: optionalText,
  /**
   * Web push VAPID keys (§7.7), held apart from the configuration document: the public key
   * (every function: GET /config shows it); the key pair, for the functions that send, is the
   * table's VAPID secret in AWS (STORED_SECRETS) and a file under DATA_DIR locally (VAPID_KEYS_FILE).
   */
  VAPID_PUBLIC_KEY: optionalText,
  VAPID_KEYS_FILE: optionalText,
  /** Push delivery: per-attempt timeout and retry backoff base (ms); tests shorten them. */
  PUSH_TIMEOUT_MS: z._default(count(z.positive()), 5_000),
  PUSH_RETRY_BASE_MS: z._default(count(z.positive()), 500),
  /** Webhook retry backoff base (ms, contract §6.6: 1000); tests shorten it. */
  HOOK_RETRY_BASE_MS: z._default(count(z.positive()), 1_000),
  /**
   * How long an instance trusts a session record it read, and how often an open event stream reads
   * it again (ms; core/sessions.ts sessionCheckMs, 4000 when unset). Tests shorten it.
   */
  SESSION_CHECK_MS: z.optional(count(z.positive())),
  /** Contract §12.2 overrides. */
  OPENGRAM_INSTANCE_SECRET: optionalText,
  OPENGRAM_PUBLIC_BASE_URL: optionalText,
  OPENGRAM_CORS_ORIGINS: optionalText,
  OPENGRAM_SERVER_PORT: optionalText,
  /** Contract §1.12 write rate limit (rateLimitSettings): writes per window, and the window (ms). */
  OPENGRAM_WRITE_RATE_LIMIT_MAX: positiveOr(100),
  OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS: positiveOr(1000),
  /** 1, true or yes (any case): the client's address is taken from X-Forwarded-For. */
  OPENGRAM_TRUST_PROXY_HEADERS: z.pipe(
    z._default(z.string(), ''),
    z.transform((text: string) => /^(1|true|yes)$/i.test(text)),
  ),
  /** Auto-rename providers' keys: GET /config reports only whether one is present. */
  ANTHROPIC_API_KEY: optionalText,
  OPENAI_API_KEY: optionalText,
  GEMINI_API_KEY: optionalText,
  GOOGLE_API_KEY: optionalText,
  XAI_API_KEY: optionalText,
  OPENROUTER_API_KEY: optionalText,
  /**
   * Auto-rename providers' base URLs by provider id, as JSON (`{"openai":"http://127.0.0.1:9/openai"}`):
   * tests point the adapters at a fake provider on loopback; unset, each provider's public API.
   */
  AUTO_RENAME_BASE_URLS: z.optional(
    z.pipe(
      z.transform((value: unknown) => {
        try {
          return typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
        } catch {
          return value;
        }
      }),
      z.partialRecord(z.enum(PROVIDER_IDS), z.string().check(z.url())),
    ),
  ),
  /** Per-call timeout of an auto-rename provider request (ms; §5.2.3 states 15 s). */
  AUTO_RENAME_TIMEOUT_MS: z._default(count(z.positive()), 15_000),
  SERVICE_VERSION: z._default(text, '0.1.0'),
  /** SSE stream lifetime and timers (ms); defaults in core/event-stream.ts. Tests shorten them. */
  SSE_LIFETIME_MS: z.optional(count(z.positive())),
  SSE_KEEPALIVE_MS: z.optional(count(z.positive())),
  SSE_HOLE_GRACE_MS: z.optional(count(z.positive())),
  /** Poll interval an idle stream backs off to (ms). */
  SSE_IDLE_POLL_MS: z.optional(count(z.positive())),
  /** For this long after its last event a stream polls at least every SSE_WARM_POLL_MS (ms; 0 off). */
  SSE_WARM_MS: z.optional(count(z.nonnegative())),
  SSE_WARM_POLL_MS: z.optional(count(z.positive())),
  /** An SSE stream with no event for this long ends with a retry hint (ms; 0 never). */
  SSE_IDLE_RELEASE_MS: z.optional(count(z.nonnegative())),
  /** The `retry:` hint sent to SSE clients (ms). */
  SSE_RETRY_MS: z.optional(count(z.positive())),
  /** `off`: a stream finds writes made in its own process by polling alone, as in AWS (benchmarks). */
  SSE_WRITE_BELL: z._default(z.enum(['on', 'off']), 'on'),
  /** Adds x-ddb-* usage headers to responses (benchmarks only). */
  EXPOSE_USAGE_HEADERS: z._default(z.enum(['0', '1']), '0'),
});
export type Env = z.infer<typeof Env>;

function parse(source: NodeJS.ProcessEnv): Env {
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const result = Env.safeParse(present);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.');
    // A nested path (AUTO_RENAME_BASE_URLS.openai) names a part of a variable that is set.
    return present[String(issue.path[0])] === undefined
      ? `${name} is not set`
      : `${name} is invalid (${issue.message})`;
  });
  throw new Error(`The function's environment is incomplete: ${problems.join('; ')}`);
}

let cached: Env | undefined;

export function env(): Env {
  cached ??= parse(process.env);
  return cached;
}

type OptionalText = {
  [K in keyof Env]-?: undefined extends Env[K] ? (NonNullable<Env[K]> extends string ? K : never) : never;
}[keyof Env];

/** A variable only some functions need, with a clear error where one of them runs without it. */
export function requiredEnv(name: OptionalText): string {
  const value = env()[name];
  if (!value) throw new Error(`${name} is not configured`);
  return value;
}

/** §1.12 write rate limit parameters (the defaults apply to an unset or unusable value). */
export function rateLimitSettings(): { max: number; windowMs: number; trustProxyHeaders: boolean } {
  const e = env();
  return {
    max: e.OPENGRAM_WRITE_RATE_LIMIT_MAX,
    windowMs: e.OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS,
    trustProxyHeaders: e.OPENGRAM_TRUST_PROXY_HEADERS,
  };
}

/**
 * Tests only (test/support/api.ts setConfig and setEnv): the next env() reads process.env
 * again, as a new container would. Nothing in functions/ calls it.
 */
export function reloadEnvForTests(): void {
  cached = undefined;
}
