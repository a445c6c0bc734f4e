/**
 * The server under test in the browser tests: `npm start` as it ships (the launcher local/main.ts,
 * the precompiled runtime, DynamoDB Local and the emulators with their data in a temporary folder,
 * the web app served at `/` and rebuilt first if its sources changed), on a free port, through
 * test/support/runtime.ts. One per test file, on the run's one DynamoDB Local (started by the
 * project's globalSetup, support/browser-setup.mjs) through DYNAMODB_ENDPOINT, in a table of its
 * own, deleted when it stops; with `ownDynamo`, or run without that globalSetup, it launches its
 * own JVM with its data in the data folder, exactly as `npm start` ships.
 *
 * Data is seeded through the public API with the bearer secret, as an agent would write it.
 */
import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRuntime } from '../../support/runtime.js';
import type { Runtime } from '../../support/runtime.js';

/** The agents and models of every test instance (the new-chat pickers list them). */
export const E2E_CONFIG = {
  agents: [
    { id: 'assistant', name: 'Assistant', description: 'General helper' },
    { id: 'coder', name: 'Coder', description: 'Writes code' },
  ],
  models: [
    { id: 'model-a', name: 'Model A', description: '' },
    { id: 'model-b', name: 'Model B', description: '' },
  ],
};

export interface RelayOptions {
  /** Turn the instance secret on (default): a fresh random one, or this one. `false`: an open instance. */
  secret?: string | false;
  /**
   * Where the secret is given: `env` (default) as OPENGRAM_INSTANCE_SECRET, which overrides the
   * stored configuration on every read (§12.2), or `config` in the configuration file, so that
   * PATCH /config/admin can rotate it (the settings screen's test).
   */
  secretIn?: 'env' | 'config';
  /** Reads need the secret too (default true when the secret is on: the app then has to sign in to see anything). */
  readsNeedSecret?: boolean;
  /** More configuration (merged over E2E_CONFIG). */
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  /** Its own DynamoDB Local, in its data folder, as `npm start` ships (default: the run's shared one). */
  ownDynamo?: boolean;
}

export interface ApiAnswer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Relay {
  /** The origin, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The instance secret, or undefined on an open instance. */
  secret: string | undefined;
  dataDir: string;
  /** Milliseconds from spawning `npm start` to its "listening" line. */
  startMs: number;
  /** A request with the bearer secret (when on), JSON in and out. */
  api<T = any>(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiAnswer<T>>;
  /** Stops the server (a clean stop, as Ctrl-C), keeping its data folder: the page sees it go away. */
  down(): Promise<void>;
  /** Starts `npm start` again on the same port and data folder (after `down`). */
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** A secret shaped like a real one: 40 random URL-safe characters after the `og_` prefix. */
export const randomSecret = () => `og_${randomBytes(30).toString('base64url')}`;

export async function startRelay(options: RelayOptions = {}): Promise<Relay> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-relay-e2e-'));
  const secret = options.secret === false ? undefined : (options.secret ?? randomSecret());
  const configPath = join(dataDir, 'config.json');
  const inConfig = secret !== undefined && options.secretIn === 'config';
  const security = {
    readEndpointsRequireInstanceSecret: options.readsNeedSecret ?? secret !== undefined,
    ...(inConfig ? { instanceSecretEnabled: true, instanceSecret: secret } : {}),
  };
  writeFileSync(configPath, JSON.stringify({ ...E2E_CONFIG, security, ...options.config }));
  const began = Date.now();
  const shared = options.ownDynamo ? undefined : process.env.E2E_DYNAMODB_ENDPOINT;
  const tableName = `e2e-${randomBytes(6).toString('hex')}`;
  const env = {
    DATA_DIR: join(dataDir, 'data'),
    ...(shared ? { DYNAMODB_ENDPOINT: shared, TABLE_NAME: tableName } : {}),
    CONFIG_PATH: configPath,
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    ...(secret && !inConfig ? { OPENGRAM_INSTANCE_SECRET: secret } : {}),
    ...options.env,
  };
  let runtime: Runtime | undefined;
  try {
    runtime = await startRuntime(env, 'local/main.ts');
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const startMs = Date.now() - began;
  const url = runtime.url;
  const port = Number(new URL(url).port);
  const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        ...(secret ? { authorization: `Bearer ${secret}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: the text is the body.
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };
  return {
    url,
    secret,
    dataDir,
    startMs,
    api,
    down: async () => {
      await runtime?.stop();
      runtime = undefined;
    },
    up: async () => {
      if (runtime) throw new Error('the relay is already up');
      runtime = await startRuntime(env, 'local/main.ts', port);
    },
    stop: async () => {
      await runtime?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      if (shared) await dropTable(shared, tableName);
    },
  };
}

/** Deletes a stopped relay's table from the shared DynamoDB Local (a failure only leaves it there). */
async function dropTable(endpoint: string, tableName: string): Promise<void> {
  const { DeleteTableCommand, DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await client.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  } finally {
    client.destroy();
  }
}

/**
 * One relay for the test file: started in beforeAll, stopped in afterAll (failed tests included).
 * Read its fields inside tests (the object is filled once it is up).
 */
export function useRelay(options: RelayOptions = {}): Relay {
  const relay = {} as Relay;
  beforeAll(async () => {
    Object.assign(relay, await startRelay(options));
    if (process.env.E2E_TIMINGS) process.stderr.write(`e2e: npm start answered in ${relay.startMs} ms\n`);
  }, 120_000);
  afterAll(async () => {
    await relay.stop?.();
  });
  return relay;
}

/** Creates a chat through the API (as an agent would), with an optional first message; returns its id. */
export async function seedChat(relay: Relay, fields: Record<string, unknown> = {}): Promise<string> {
  const res = await relay.api('POST', '/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a', ...fields });
  if (res.status !== 201) throw new Error(`seeding a chat: ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

/** Signs in as a browser would (the secret in the body, nothing else): the cookie's `name=value` and the whole answer. */
export async function signInCookie(relay: Relay): Promise<{ cookie: string; res: Response }> {
  const res = await fetch(`${relay.url}/api/v1/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: relay.url },
    body: JSON.stringify({ secret: relay.secret }),
  });
  if (res.status !== 204) throw new Error(`signing in: ${res.status} ${await res.text()}`);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, res };
}

/**
 * Signs in and returns what a browser would keep, for `context.addCookies`: the HttpOnly session
 * cookie and its page-readable hint (docs/web-app.md "Browser sessions"), which the app reads on load.
 */
export async function sessionCookies(relay: Relay) {
  const { res } = await signInCookie(relay);
  const { hostname } = new URL(relay.url);
  return res.headers.getSetCookie().map((line) => {
    const [pair, ...attributes] = line.split(';').map((part) => part.trim());
    const at = pair!.indexOf('=');
    const path = attributes.find((a) => /^path=/i.test(a))?.slice('path='.length) ?? '/';
    return {
      name: pair!.slice(0, at),
      value: pair!.slice(at + 1),
      domain: hostname,
      path,
      httpOnly: attributes.some((a) => a.toLowerCase() === 'httponly'),
      sameSite: 'Strict' as const,
      secure: false,
    };
  });
}
