/**
 * Boots the local runtime for one test file: a fresh table on the shared DynamoDB Local and
 * the real HTTP server on a free loopback port, serving the same handlers Lambda runs.
 * Tests talk to it with real HTTP requests.
 */
import { afterAll, beforeAll, expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reloadEnvForTests } from '../../functions/platform/env.js';
import { ensureTable } from '../../local/table.js';
import { LOCAL_AWS_ENV } from '../../local/dynamo.js';
import { checkAnswer, documentProblems } from './openapi-check.js';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  /** A raw body string sent as-is (with `contentType`). */
  raw?: string;
  contentType?: string;
  /** Ends the request from this side (the client leaves: fetch's AbortSignal). */
  signal?: AbortSignal;
}

export interface TestApi {
  url: string;
  tableName: string;
  request<T = any>(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<Response<T>>;
  get<T = any>(path: string, options?: RequestOptions): Promise<Response<T>>;
  post<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<Response<T>>;
  patch<T = any>(path: string, body?: unknown, options?: RequestOptions): Promise<Response<T>>;
  /** Replaces the instance configuration document (as an admin change would). */
  setConfig(config: Record<string, unknown>): void;
  /**
   * Sets (or, with undefined, removes) environment variables and has the handlers read their
   * environment again (functions/platform/env.ts otherwise reads it once), as a redeploy would.
   */
  setEnv(vars: Record<string, string | undefined>): void;
  close(): Promise<void>;
}

/**
 * The environment of a test that counts a request's storage calls or round trips (the usage
 * headers): a warm instance inside one rate-limit window and one configuration cache period.
 * Both are per-time costs, not per-request ones: when the write rate limit's window (1 s by
 * default) rolls over, the instance's next write leases a block in two sequential calls (the
 * lease from the closed window fails its condition, then the new window opens), and every
 * CONFIG_CACHE_MS (5 s by default) a request re-reads the stored configuration. On a loaded
 * machine a test outlives both, and whichever request comes next shows 1 to 3 extra trips.
 * Their cost per second belongs to the bench (npm run bench), which runs with the defaults.
 */
export const COUNTING_ENV: Record<string, string> = {
  EXPOSE_USAGE_HEADERS: '1',
  OPENGRAM_WRITE_RATE_LIMIT_WINDOW_MS: String(3_600_000),
  CONFIG_CACHE_MS: String(3_600_000),
};

export interface StartOptions {
  config?: Record<string, unknown>;
  /** Extra environment (e.g. OPENGRAM_WRITE_RATE_LIMIT_MAX). Rate limiting is effectively off by default. */
  env?: Record<string, string>;
  /**
   * Run the local stream-timeout timers (off by default: a stream a test leaves open would be
   * cancelled by its timer a minute later, inside another test's event assertions).
   */
  streamTimers?: boolean;
  /**
   * Run the dispatch queues and the flush consumer (off by default; the dispatch tests turn it
   * on). They keep their messages in a data folder, as `npm start` does (removed on close).
   */
  dispatch?: boolean;
  /** Where the local runtime keeps its VAPID key pair (a temporary file of its own by default). */
  vapidKeysFile?: string;
  /**
   * Run the search index writer on its tail of the event log, as npm start does (off by
   * default: the search tests turn it on; the others keep the shared DynamoDB Local free of it).
   */
  search?: boolean;
  /**
   * Load each route's handler on its first request (local/routing.ts `lazy`; by default, unless
   * `dispatch` is on): a file uses a few of the routes. The dispatch files measure debounces,
   * waits and leases, and a module loading mid-test holds this process (where the local API and
   * its queues run) for a few hundred milliseconds, so they load every handler at start.
   */
  lazyHandlers?: boolean;
  /** The folder of the search index's local segment copies (a temporary one by default). */
  searchCacheDir?: string;
  /**
   * Asked at each request: seconds in place of the route's function timeout, or undefined for
   * its own (local/server.ts; not on the rehearsal). For the tests whose subject is what a
   * request does as its timeout nears, a shorter one waits less for the same path.
   */
  functionTimeoutSeconds?: () => number | undefined;
}

let started = false;

/**
 * The synthesized assembly this file runs on (the rehearsal project, jest.config.js;
 * rehearsal-env.mjs), or undefined on the sources.
 */
export const rehearsalAssembly = (): string | undefined =>
  process.env.RELAY_TEST_REHEARSAL === '1' ? process.env.REHEARSAL_ASSEMBLY : undefined;

export async function startApi(options: StartOptions = {}): Promise<TestApi> {
  // Handlers read TABLE_NAME once per module load, and a test file has one module registry.
  if (started)
    throw new Error('startApi() may be called once per test file: put another configuration in its own file.');
  started = true;
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (!endpoint)
    throw new Error('TEST_DYNAMODB_ENDPOINT is not set: run the integration tests through jest (globalSetup).');
  const host = new URL(endpoint).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost')
    throw new Error(`Refusing a non-loopback DynamoDB endpoint: ${endpoint}`);
  // The rehearsal project (jest.config.js; rehearsal-env.mjs) runs the same files on the synthesized assembly.
  const assemblyDir = rehearsalAssembly();
  if (assemblyDir) {
    const { startRehearsedApi } = await import('./rehearsed-api.js');
    return startRehearsedApi(options, endpoint, assemblyDir, (url) => requestTo(url));
  }
  const tableName = `test-${randomUUID()}`;
  await ensureTable(endpoint, tableName);
  Object.assign(process.env, LOCAL_AWS_ENV, {
    TABLE_NAME: tableName,
    DYNAMODB_ENDPOINT: endpoint,
    INSTANCE_CONFIG: JSON.stringify(options.config ?? {}),
    POWERTOOLS_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'SILENT',
    OPENGRAM_WRITE_RATE_LIMIT_MAX: '1000000',
    ...options.env,
  });
  // Whatever read the environment before this point read an incomplete one.
  reloadEnvForTests();
  // Imported after the environment is set: handlers read it once (functions/platform/env.ts).
  const { startLocalApi } = await import('../../local/server.js');
  const sqsDataDir = options.dispatch ? mkdtempSync(join(tmpdir(), 'chat-relay-sqs-')) : undefined;
  // The media bucket's objects go to the run's S3 emulator (global-setup.mjs), which keeps them in
  // a folder as npm start does; a file run another way starts an emulator of its own, so.
  const s3Upstream = process.env.TEST_S3_ENDPOINT;
  const s3DataDir = s3Upstream ? undefined : mkdtempSync(join(tmpdir(), 'chat-relay-s3-'));
  const api = await startLocalApi(0, {
    streamTimers: options.streamTimers ?? false,
    dispatch: options.dispatch ?? false,
    search: options.search ?? false,
    lazyHandlers: options.lazyHandlers ?? !options.dispatch,
    ...(options.searchCacheDir ? { searchCacheDir: options.searchCacheDir } : {}),
    ...(s3DataDir ? { s3DataDir } : { s3Upstream }),
    ...(sqsDataDir ? { sqsDataDir } : {}),
    ...(options.vapidKeysFile ? { vapidKeysFile: options.vapidKeysFile } : {}),
    ...(options.functionTimeoutSeconds ? { functionTimeoutSeconds: options.functionTimeoutSeconds } : {}),
  });

  const request = requestTo(api.url);

  function setEnv(vars: Record<string, string | undefined>): void {
    for (const [name, value] of Object.entries(vars)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    reloadEnvForTests();
  }

  return {
    url: api.url,
    tableName,
    request,
    get: (path, opts) => request('GET', path, undefined, opts),
    post: (path, body, opts) => request('POST', path, body, opts),
    patch: (path, body, opts) => request('PATCH', path, body, opts),
    setConfig: (config) => setEnv({ INSTANCE_CONFIG: JSON.stringify(config) }),
    setEnv,
    close: async () => {
      await api.close();
      if (sqsDataDir) rmSync(sqsDataDir, { recursive: true, force: true });
      if (s3DataDir) rmSync(s3DataDir, { recursive: true, force: true });
    },
  };
}

/** Real HTTP requests to a running API: JSON bodies, or a raw body with its content type. */
function requestTo(base: string): TestApi['request'] {
  return async <T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<Response<T>> => {
    const headers: Record<string, string> = { ...opts.headers };
    let payload: string | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers['content-type'] = opts.contentType ?? 'application/json';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: payload,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const answer = { status: res.status, headers: res.headers, body: parsed as T, text };
    checkAnswer(method, path, answer);
    return answer;
  };
}

/**
 * The test file's API: started before its tests and closed after them. Call it once, at the top
 * level of the file; the object it returns is usable inside tests (it is filled in by beforeAll).
 * Every integration test file that talks to the API gets it this way (the area helpers such as
 * dispatch/support.ts build on it). Options that depend on something started first (a fake
 * provider's URLs) come from a function, called in the same beforeAll just before the start.
 * Seeding or spies that need the running API go in a beforeAll declared after this call: jest
 * runs a file's beforeAll hooks in the order they are declared.
 */
export function useApi(options: StartOptions | (() => StartOptions | Promise<StartOptions>) = {}): TestApi {
  const api = {} as TestApi;
  beforeAll(async () => {
    Object.assign(api, await startApi(typeof options === 'function' ? await options() : options));
  });
  afterAll(async () => {
    if ('close' in api) await api.close();
    // Each was thrown to its test too; kept here in case a test caught it (openapi-check.ts).
    expect(documentProblems).toEqual([]);
  });
  return api;
}

/** An instance configuration with these agents and models, each named by its id. */
export const configOf = (agentIds: string[], modelIds: string[]) => ({
  agents: agentIds.map((id) => ({ id, name: id, description: '' })),
  models: modelIds.map((id) => ({ id, name: id, description: '' })),
});

/** An instance configuration with one agent (`assistant`) and one model (`m`). */
export const oneAgentConfig = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};

/** An instance configuration with two agents (`assistant`, `coder`) and two models (`model-a`, `model-b`). */
export const twoAgentConfig = {
  agents: [
    { id: 'assistant', name: 'Assistant', description: 'a' },
    { id: 'coder', name: 'Coder', description: 'c' },
  ],
  models: [
    { id: 'model-a', name: 'A', description: '' },
    { id: 'model-b', name: 'B', description: '' },
  ],
};

/** A valid chat-create body, with overrides. */
export const newChat = (overrides: Record<string, unknown> = {}) => ({
  agentIds: ['agent-default'],
  modelId: 'model-default',
  ...overrides,
});
