/**
 * Every HTTP endpoint, once. The CDK stack builds one Lambda + one API Gateway route per
 * entry (the event stream, `streaming`, gets a response-streaming function URL instead), the
 * local runtime mounts the same handlers, the API document describes them, and test/infra checks
 * that the synthesized template agrees. Plain data: no imports, so the stack, the local server
 * and the tests can all read it without pulling in handler code.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Which requests need the instance secret (contract §1.11). */
export type AuthClass = 'public' | 'read' | 'write';

export interface RouteSpec {
  method: HttpMethod;
  /** API Gateway syntax, e.g. /api/v1/chats/{chatId}. */
  path: `/api/v1/${string}`;
  /** Module under functions/http that exports `handler` (without extension). */
  handler: string;
  /** Writes get rate limiting, idempotency (POST/PATCH) and read-write table grants. */
  writes: boolean;
  /** Auth class; defaults to 'write' for writes and 'read' for reads. */
  auth?: AuthClass;
  /**
   * `config`: the route reads no data, only the live configuration (one GetItem in the SETTINGS
   * partition, core/instance-config.ts), and gets exactly that grant instead of reading the table.
   * `none`: the route makes no storage call at all, not even for the configuration: it works with
   * the configuration its container already knows (core/instance-config.ts lastKnownConfig), so it
   * answers while DynamoDB does not (GET /health, §5.1), and gets no table grant.
   * test/infra/grants.test.ts checks it against what the handler's bundle uses.
   */
  table?: 'config' | 'none';
  /**
   * Signs or checks pagination cursors (store/cursor.ts): may read the cursor-signing key and create
   * it on first use (PutItem in its SECRET#CURSOR partition only); every other function is denied
   * that partition. Other read routes get no write at all.
   * test/infra/grants.test.ts checks the flag against the handler's bundle.
   */
  cursors?: boolean;
  /** Starts stream-timeout executions (streaming message creation, §4.2). */
  streamTimer?: boolean;
  /** Sets request deadline timers (§5.5.6): delayed records on the flush queue, as the stream checks are. */
  requestTimer?: boolean;
  /** Uses the dispatch queues (claims and leases; inputs are written by other routes too, see `dispatchInputs`). */
  dispatch?: boolean;
  /** Writes dispatch inputs and seals or signals them (user messages, request resolutions). */
  dispatchInputs?: boolean;
  /** Function timeout when the default (15 s) is too short, e.g. claim long-polls. */
  timeoutSeconds?: number;
  /**
   * Memory (MB) when the default (1,024) is wrong for the route: the claim long-polls mostly
   * wait, and Lambda bills their memory for every second they wait (WAITING_MEMORY_MB).
   */
  memoryMb?: number;
  /** Reserved (and maximum) concurrency: the long-polls, so a runaway client cannot exhaust the account. */
  reservedConcurrency?: number;
  /**
   * Uses the media bucket: `read` (downloads), `write` (uploads: put and delete), `delete`
   * (deletion), `presign` (signs uploads of pending files), `finalize` (moves pending files).
   */
  mediaBucket?: 'read' | 'write' | 'delete' | 'presign' | 'finalize';
  /** Decodes images and makes thumbnails: bundles the image library and gets IMAGE_MEMORY_MB. */
  images?: boolean;
  /** Sends web push: reads the VAPID key pair (the only routes that may). */
  pushSender?: boolean;
  /** Reads the search index: its bucket's segments and a cache in the function's /tmp. */
  searchIndex?: boolean;
  /**
   * Creates the browser-session signing key on first use (contract §1.11.1: the sign-in route, which
   * also reads the instance secret although it is public). Every route that checks auth reads the
   * key; only this one may write it (sessions are revoked through their records, never the key).
   */
  signsSessions?: boolean;
  /**
   * false: an Idempotency-Key is ignored (the sign-in route: its answer is a cookie, which must never
   * be stored and replayed, and its body is the secret, which must not be fingerprinted and kept).
   */
  keyed?: false;
  /**
   * Serves the OpenAPI document: the synth writes it into the function's asset
   * (lib/openapi/write.ts); `reference` also gets the HTML renderer's files.
   */
  apiDocument?: 'document' | 'reference';
  /**
   * Answers with a body written as it goes (the event stream, §5.9 and §6.4). Not an API Gateway
   * route: the HTTP API buffers whole responses and ends integrations after 30 seconds. The stack
   * serves it from a Lambda function URL in response-streaming mode behind the CloudFront
   * distribution (lib/constructs/event-stream.ts, edge.ts), the handler is built with
   * `http(..., { streaming: true })`, and the local runtime writes its body straight into the
   * Node response. Exactly one route sets it (`streamRoute`).
   */
  streaming?: boolean;
}

/**
 * Memory of the functions that mostly wait (the claim long-polls; the event stream uses it too):
 * Lambda bills memory × time, and a worker's claim pump holds one of these all month. 128 MB
 * keeps an idle pump at the price of one 128 MB Lambda held continuously (~$4.3/month on arm64).
 */
export const WAITING_MEMORY_MB = 128;
/**
 * Memory of the chunk appends, the busiest route (a streamed reply is ~100 of them): each mostly
 * waits on two storage round trips, and its few milliseconds of CPU run on a vCPU share that
 * halves with memory. The cost model (test/bench/cost/model.ts billedMs) puts a chunk at about
 * 16 ms of waiting + its CPU × 1,769/memory: 512 MB bills ~35 % less than 1,024 MB per chunk
 * for a few milliseconds more; 256 MB would save a little more but double the CPU part again.
 */
export const CHUNK_MEMORY_MB = 512;
/** At most this many claim long-polls at once per claim route (a handful of workers need a few). */
export const CLAIM_CONCURRENCY = 10;
/**
 * At most this many open event streams at once (each holds a function instance): a browser tab or
 * a worker needs one; a runaway client cannot exhaust the account's concurrency.
 */
export const STREAM_CONCURRENCY = 25;
/**
 * The event stream's function timeout, Lambda's maximum: a connection streams for
 * DEFAULT_TIMING.lifetimeMs (14 minutes, core/event-stream.ts) and then ends cleanly, before it.
 */
export const STREAM_TIMEOUT_SECONDS = 900;

export const routes = [
  { method: 'GET', path: '/api/v1/health', handler: 'health/get', writes: false, auth: 'public', table: 'none' },
  { method: 'GET', path: '/api/v1/config', handler: 'config/get', writes: false, table: 'config' },
  { method: 'PATCH', path: '/api/v1/config/admin', handler: 'config/admin', writes: true },
  // One provider call of at most 15 s (§5.2.3).
  {
    method: 'POST',
    path: '/api/v1/config/admin/validate-auto-rename',
    handler: 'config/validate-auto-rename',
    writes: true,
    timeoutSeconds: 20,
  },

  { method: 'POST', path: '/api/v1/chats', handler: 'chats/create', writes: true, dispatchInputs: true },
  { method: 'GET', path: '/api/v1/chats', handler: 'chats/list', writes: false, cursors: true },
  { method: 'GET', path: '/api/v1/chats/pending-summary', handler: 'chats/pending-summary', writes: false },
  { method: 'GET', path: '/api/v1/chats/unread-summary', handler: 'chats/unread-summary', writes: false },
  { method: 'GET', path: '/api/v1/chats/{chatId}', handler: 'chats/get', writes: false },
  { method: 'PATCH', path: '/api/v1/chats/{chatId}', handler: 'chats/update', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/archive', handler: 'chats/archive', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/unarchive', handler: 'chats/unarchive', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/mark-read', handler: 'chats/mark-read', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/mark-unread', handler: 'chats/mark-unread', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/typing', handler: 'chats/typing', writes: true },
  { method: 'POST', path: '/api/v1/chats/{chatId}/user-typing', handler: 'chats/user-typing', writes: true },

  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/messages',
    handler: 'messages/create',
    writes: true,
    streamTimer: true,
    dispatchInputs: true,
  },
  { method: 'GET', path: '/api/v1/chats/{chatId}/messages', handler: 'messages/list', writes: false, cursors: true },
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/messages/cancel-streaming',
    handler: 'messages/cancel-streaming',
    writes: true,
  },
  // The streaming operations at both path forms (§5.4.3–5.4.5): one handler each.
  {
    method: 'POST',
    path: '/api/v1/messages/{messageId}/chunks',
    handler: 'messages/chunk',
    writes: true,
    memoryMb: CHUNK_MEMORY_MB,
  },
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/messages/{messageId}/chunks',
    handler: 'messages/chunk',
    writes: true,
    memoryMb: CHUNK_MEMORY_MB,
  },
  { method: 'POST', path: '/api/v1/messages/{messageId}/complete', handler: 'messages/complete', writes: true },
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/messages/{messageId}/complete',
    handler: 'messages/complete',
    writes: true,
  },
  { method: 'POST', path: '/api/v1/messages/{messageId}/cancel', handler: 'messages/cancel', writes: true },
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/messages/{messageId}/cancel',
    handler: 'messages/cancel',
    writes: true,
  },

  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/requests',
    handler: 'requests/create',
    writes: true,
    requestTimer: true,
  },
  { method: 'GET', path: '/api/v1/chats/{chatId}/requests', handler: 'requests/list', writes: false },
  // This project's extension (§5.5.6): every chat's requests, and the decision log.
  { method: 'GET', path: '/api/v1/requests', handler: 'requests/all', writes: false, cursors: true },
  { method: 'GET', path: '/api/v1/decisions', handler: 'decisions/list', writes: false },
  {
    method: 'PATCH',
    path: '/api/v1/requests/{requestId}',
    handler: 'requests/update',
    writes: true,
    requestTimer: true,
  },
  {
    method: 'POST',
    path: '/api/v1/requests/{requestId}/resolve',
    handler: 'requests/resolve',
    writes: true,
    dispatchInputs: true,
  },
  { method: 'POST', path: '/api/v1/requests/{requestId}/cancel', handler: 'requests/cancel', writes: true },

  {
    method: 'POST',
    path: '/api/v1/dispatch/claim',
    handler: 'dispatch/claim',
    writes: true,
    dispatch: true,
    timeoutSeconds: 29,
    memoryMb: WAITING_MEMORY_MB,
    reservedConcurrency: CLAIM_CONCURRENCY,
  },
  {
    method: 'POST',
    path: '/api/v1/dispatch/claim-many',
    handler: 'dispatch/claim-many',
    writes: true,
    dispatch: true,
    timeoutSeconds: 29,
    memoryMb: WAITING_MEMORY_MB,
    reservedConcurrency: CLAIM_CONCURRENCY,
  },
  {
    method: 'POST',
    path: '/api/v1/dispatch/{batchId}/heartbeat',
    handler: 'dispatch/heartbeat',
    writes: true,
    dispatch: true,
  },
  {
    method: 'POST',
    path: '/api/v1/dispatch/{batchId}/complete',
    handler: 'dispatch/complete',
    writes: true,
    dispatch: true,
  },
  { method: 'POST', path: '/api/v1/dispatch/{batchId}/fail', handler: 'dispatch/fail', writes: true, dispatch: true },

  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/media',
    handler: 'media/upload',
    writes: true,
    mediaBucket: 'write',
    images: true,
  },
  { method: 'GET', path: '/api/v1/chats/{chatId}/media', handler: 'media/list', writes: false, cursors: true },
  // Files larger than one request carries: an upload session, then its finalize (docs/architecture.md "Large files").
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/media/uploads',
    handler: 'media/upload-session',
    writes: true,
    mediaBucket: 'presign',
  },
  // Finalize may read and decode a 50 MB image: the longest API Gateway allows.
  {
    method: 'POST',
    path: '/api/v1/chats/{chatId}/media/uploads/{uploadId}/complete',
    handler: 'media/finalize',
    writes: true,
    mediaBucket: 'finalize',
    images: true,
    timeoutSeconds: 29,
  },
  { method: 'GET', path: '/api/v1/media/{mediaId}', handler: 'media/get', writes: false },
  { method: 'DELETE', path: '/api/v1/media/{mediaId}', handler: 'media/delete', writes: true, mediaBucket: 'delete' },
  { method: 'GET', path: '/api/v1/files/{mediaId}', handler: 'files/get', writes: false, mediaBucket: 'read' },
  {
    method: 'GET',
    path: '/api/v1/files/{mediaId}/thumbnail',
    handler: 'files/thumbnail',
    writes: false,
    mediaBucket: 'read',
  },

  { method: 'GET', path: '/api/v1/tags/suggestions', handler: 'tags/suggestions', writes: false },
  {
    method: 'GET',
    path: '/api/v1/search',
    handler: 'search/get',
    writes: false,
    searchIndex: true,
    cursors: true,
  },

  { method: 'POST', path: '/api/v1/push/subscribe', handler: 'push/subscribe', writes: true },
  { method: 'DELETE', path: '/api/v1/push/subscribe', handler: 'push/unsubscribe', writes: true },
  // Waits for every delivery (3 attempts of at most 5 s each per device, in parallel).
  {
    method: 'POST',
    path: '/api/v1/push/test',
    handler: 'push/test',
    writes: true,
    pushSender: true,
    timeoutSeconds: 25,
  },

  // The event stream (§5.9, §6.4), a response-streaming function URL (`streaming`). Its auth is
  // the event stream's class of §1.11, the secret whenever it is on whatever the read toggle:
  // the write class's rule, though it is no write (never rate limited, §1.12). Each connection
  // holds an instance while it mostly waits between polls: the waiting memory, a cap on open streams.
  {
    method: 'GET',
    path: '/api/v1/events/stream',
    handler: 'events/stream',
    writes: false,
    auth: 'write',
    streaming: true,
    timeoutSeconds: STREAM_TIMEOUT_SECONDS,
    memoryMb: WAITING_MEMORY_MB,
    reservedConcurrency: STREAM_CONCURRENCY,
  },

  // Browser sessions (§1.11.1, this project's extension): sign in with the secret, sign out, sign out everywhere.
  {
    method: 'POST',
    path: '/api/v1/auth/session',
    handler: 'auth/sign-in',
    writes: true,
    auth: 'public',
    signsSessions: true,
    keyed: false,
  },
  { method: 'DELETE', path: '/api/v1/auth/session', handler: 'auth/sign-out', writes: true, auth: 'public' },
  {
    method: 'DELETE',
    path: '/api/v1/auth/sessions',
    handler: 'auth/sign-out-everywhere',
    writes: true,
  },

  // The API's own description (§14 item 31): an OpenAPI 3.1 document and its HTML reference.
  {
    method: 'GET',
    path: '/api/v1/doc',
    handler: 'doc/get',
    writes: false,
    auth: 'public',
    table: 'config',
    apiDocument: 'document',
  },
  {
    method: 'GET',
    path: '/api/v1/reference',
    handler: 'doc/reference',
    writes: false,
    auth: 'public',
    table: 'config',
    apiDocument: 'reference',
  },
] as const satisfies readonly RouteSpec[];

export type Route = (typeof routes)[number];

/**
 * Memory of the image routes: decoding is CPU-bound (WebAssembly on Lambda, one thread), and
 * Lambda's CPU grows with memory; a 100-megapixel PNG peaks at about 830 MB.
 */
export const IMAGE_MEMORY_MB = 2048;

/** The routes API Gateway serves, one function each: every entry but the streaming one. */
export const apiRoutes: readonly RouteSpec[] = (routes as readonly RouteSpec[]).filter((r) => !r.streaming);

/**
 * The event stream's entry (contract §5.9, §6.4), the one `streaming` route: a response-streaming
 * Lambda function URL in AWS (lib/constructs/event-stream.ts), which the CloudFront distribution
 * serves at its path; the local runtime serves it on the API port.
 */
export const streamRoute: RouteSpec = theStreamingRoute();

function theStreamingRoute(): RouteSpec {
  const streaming = (routes as readonly RouteSpec[]).filter((r) => r.streaming);
  if (streaming.length !== 1)
    throw new Error(`lib/routes.ts: ${streaming.length} streaming routes; the stack serves one.`);
  return streaming[0]!;
}

/**
 * The catch-all ($default route in API Gateway): CORS preflight for every path and the
 * 404 envelope for unknown paths and unsupported methods (contract §1.1, §1.13).
 */
export const fallbackHandler = 'fallback';

export function authClassOf(route: RouteSpec): AuthClass {
  return route.auth ?? (route.writes ? 'write' : 'read');
}

/** A stable construct id for a route, e.g. "PostApiV1ChatsChatIdArchive". */
export function routeId(route: Pick<RouteSpec, 'method' | 'path'>): string {
  const words = `${route.method} ${route.path}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words.map((w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase()).join('');
}

/** A route's function timeout when it sets none (`timeoutSeconds`; the stack's default). */
export const DEFAULT_FUNCTION_TIMEOUT_SECONDS = 15;

/** The function timeout of a route (the catch-all has the default). */
export const functionTimeoutSeconds = (route: Pick<RouteSpec, 'timeoutSeconds'> | undefined): number =>
  route?.timeoutSeconds ?? DEFAULT_FUNCTION_TIMEOUT_SECONDS;

/**
 * The areas of the API: the stack puts each area's functions in a nested stack of its own
 * (lib/constructs/api-area.ts), so no CloudFormation template nears its 500 resources as the
 * routes grow. Every API route falls in one; `admin` takes what no other area names.
 */
export const API_AREAS = ['chats', 'messages', 'requests', 'media', 'dispatch', 'admin'] as const;
export type ApiArea = (typeof API_AREAS)[number];

/** What a first path segment after /api/v1 (or after /api/v1/chats/{chatId}) belongs to. */
const AREA_OF_SEGMENT: Readonly<Record<string, ApiArea>> = {
  chats: 'chats',
  messages: 'messages',
  requests: 'requests',
  // The decision log records request closings (§5.5.6).
  decisions: 'requests',
  media: 'media',
  files: 'media',
  dispatch: 'dispatch',
};

/**
 * A route's area, by its path: `/api/v1/chats/{chatId}/messages…` is `messages` (the chat's
 * messages, requests and media go with their kind, not with the chat), `/api/v1/files/…` is
 * `media`, a segment no area names (health, config, auth, docs, tags, search, push) is `admin`.
 * By path rather than a field on each entry: a new route lands in an area without a choice to
 * forget, and test/unit/routes.test.ts lists each area's routes.
 */
export function apiAreaOf(route: Pick<RouteSpec, 'path'>): ApiArea {
  const [first, , third] = route.path.slice('/api/v1/'.length).split('/');
  if (first === 'chats' && third !== undefined && AREA_OF_SEGMENT[third]) return AREA_OF_SEGMENT[third];
  return AREA_OF_SEGMENT[first ?? ''] ?? 'admin';
}
