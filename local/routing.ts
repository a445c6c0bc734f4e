/**
 * The route table as the local adapter (local/server.ts) serves it: every route's handler module
 * loaded once, its API Gateway path (`/api/v1/chats/{chatId}`) turned into a pattern, and the
 * lookup of the route a request takes, with its path parameters as API Gateway hands them over.
 */
import type { ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { fallbackHandler, routes } from '../lib/routes.js';
import type { RouteSpec } from '../lib/routes.js';
import { installAwsLambdaGlobal } from './stream-adapter.js';

/** A buffered handler: API Gateway's payload-v2 event in, its result out. */
export type Handler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<{
  statusCode: number;
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  /** `Set-Cookie` values (API Gateway's payload v2 `cookies`). */
  cookies?: string[];
}>;

/** A response-streaming handler (a function URL's): it writes into the response itself. */
export type StreamHandler = (event: APIGatewayProxyEventV2, stream: ServerResponse, context: Context) => Promise<void>;

/** A route's handler, as its module exports it. */
export type LoadedHandler = { kind: 'buffered'; run: Handler } | { kind: 'streaming'; run: StreamHandler };

export interface Mounted {
  route: RouteSpec;
  pattern: RegExp;
  params: string[];
  /** Sorts literal segments before parameters (contract §1.1). */
  rank: string;
  /**
   * The route's handler (a streaming route's, the event stream's, writes straight into the Node
   * response): loaded once, at mount or on the route's first request (mountAll's `lazy`).
   */
  handler(): Promise<LoadedHandler>;
}

export interface MountedRoutes {
  /** Every route, those with literal segments first. */
  mounted: Mounted[];
  /** The catch-all of the `$default` route (CORS preflight, the 404 envelope). */
  fallback(): Promise<Handler>;
}

const modules = new Map<string, Promise<Handler>>();
/** The load under way: one at a time, as handlers share modules and jest's ESM loader cannot link them concurrently. */
let loading: Promise<unknown> = Promise.resolve();

/** A handler module's `handler`, imported once per process. */
function loadHandler(name: string): Promise<Handler> {
  let module = modules.get(name);
  if (!module) {
    module = loading.then(async () => ((await import(`../functions/http/${name}.js`)) as { handler: Handler }).handler);
    loading = module.catch(() => undefined);
    modules.set(name, module);
  }
  return module;
}

/**
 * Every route's pattern and handler (the function environment must be set by now:
 * platform/env.ts reads it once). The handlers load at once, so a module that fails to load fails
 * the start (npm start); with `lazy`, each loads on its route's first request instead, as Lambda
 * loads a function's code on its first invocation (a test file uses a few of the routes, and
 * loading all of them cost about 0.8 s of CPU per file under jest).
 */
export async function mountAll(options: { lazy?: boolean } = {}): Promise<MountedRoutes> {
  // A streaming handler calls Lambda's `awslambda.streamifyResponse` as its module loads.
  installAwsLambdaGlobal();
  const mounted: Mounted[] = [];
  for (const route of routes as readonly RouteSpec[]) {
    const params: string[] = [];
    let loaded: Promise<LoadedHandler> | undefined;
    const segments = route.path.split('/').slice(1);
    const source = segments
      .map((s) => {
        const param = /^\{(\w+)\}$/.exec(s);
        if (!param) return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        params.push(param[1]!);
        return '([^/]+)';
      })
      .join('/');
    mounted.push({
      route,
      params,
      pattern: new RegExp(`^/${source}/?$`),
      rank: segments.map((s) => (s.startsWith('{') ? '1' : '0')).join(''),
      handler: () =>
        (loaded ??= loadHandler(route.handler).then((run): LoadedHandler =>
          route.streaming ? { kind: 'streaming', run: run as unknown as StreamHandler } : { kind: 'buffered', run },
        )),
    });
  }
  mounted.sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  const fallback = () => loadHandler(fallbackHandler);
  if (!options.lazy) {
    for (const m of mounted) await m.handler();
    await fallback();
  }
  return { mounted, fallback };
}

/**
 * A path parameter as API Gateway hands it over: percent-decoded, or as sent when it is no valid
 * encoding (a malformed escape, an encoded lone surrogate), so the route answers its own 4xx (an
 * unknown id) instead of the adapter failing.
 */
function decodePathParameter(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** The first route (in `mounted`'s order) that takes `method` and `path`, if any, and its path parameters. */
export function matchRoute(
  mounted: readonly Mounted[],
  method: string,
  path: string,
): { found: Mounted | undefined; params: Record<string, string> } {
  let found: Mounted | undefined;
  let values: string[] = [];
  for (const m of mounted) {
    if (m.route.method !== method) continue;
    const hit = m.pattern.exec(path);
    if (hit) {
      found = m;
      values = hit.slice(1);
      break;
    }
  }
  const params: Record<string, string> = {};
  found?.params.forEach((name, i) => (params[name] = decodePathParameter(values[i] ?? '')));
  return { found, params };
}
