/**
 * The route table's declarations of table use (lib/routes.ts `table: 'config'`, `cursors`), from
 * which lib/constructs/api.ts derives each function's grant, checked against what each handler's
 * bundle really contains: esbuild bundles every route handler (as the synth does, without
 * writing anything) and its metafile says which store modules reach the output.
 * - `table: 'config'` (GetItem in the SETTINGS partition only) or `'none'` (no grant: the route
 *   makes no storage call, test/integration/health) ⇔ the handler reaches no repository but the
 *   configuration's (store/config-repo.ts, in every bundle through the http() factory);
 * - `cursors` (the cursor-signing key's partition: reads, and PutItem on first use; every other
 *   function is denied it) ⇔ the handler reaches store/cursor.ts.
 * stack.test.ts ("permissions") checks that the template grants exactly that.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { build } from 'esbuild';
import type { Metafile } from 'esbuild';
import { routes } from '../../lib/routes.js';
import type { RouteSpec } from '../../lib/routes.js';
import { tableAccessOf } from '../../lib/constructs/api.js';

/** Store modules that touch no data: the client, the key spellings, the configuration document. */
const CONFIG_ONLY = new Set(['db.ts', 'keys.ts', 'config-repo.ts']);
/**
 * In every bundle through the http() factory (middleware/http.ts), but run only by writes (the
 * rate limit) and by POST and PATCH (idempotency): a read route never reaches them.
 */
const WRITE_MIDDLEWARE = new Set(['rate-limit-repo.ts', 'idempotency-repo.ts']);
/**
 * In every bundle through the configuration (core/instance-config.ts reads the instance secret) and the
 * edge check (middleware/origin-verify.ts): the stored secrets, whose partitions the stack grants per
 * function apart from its table access (ApiFunction.bindStoredSecret; stack.test.ts checks them).
 */
const STORED_SECRETS_REPO = 'secrets-repo.ts';
/**
 * In every bundle through the auth check (middleware/auth.ts): the browser-session records, whose
 * partition the stack grants to every function that checks auth apart from its table access
 * (ApiFunction.bindSessionKey; stack.test.ts checks it).
 */
const SESSIONS_REPO = 'sessions-repo.ts';

let used: Map<string, Set<string>>;

beforeAll(async () => {
  const handlers = [...new Set(routes.map((r) => r.handler))];
  const result = await build({
    entryPoints: Object.fromEntries(handlers.map((h) => [h, `functions/http/${h}.ts`])),
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    outdir: 'unused',
    packages: 'external',
    logLevel: 'error',
  });
  const meta: Metafile = result.metafile;
  used = new Map();
  for (const output of Object.values(meta.outputs)) {
    if (!output.entryPoint) continue;
    const handler = output.entryPoint.replace(/^functions\/http\//, '').replace(/\.ts$/, '');
    const stores = Object.entries(output.inputs)
      .filter(([path, input]) => path.startsWith('functions/store/') && input.bytesInOutput > 0)
      .map(([path]) => path.slice('functions/store/'.length));
    used.set(handler, new Set(stores));
  }
}, 120_000);

describe('table grants follow what each handler uses', () => {
  it('bundled every handler of the route table', () => {
    expect([...used.keys()].sort()).toEqual([...new Set(routes.map((r) => r.handler))].sort());
  });

  it("declares table: 'config' or 'none' exactly on the routes that reach no data repository", () => {
    for (const route of routes as readonly RouteSpec[]) {
      const stores = [...used.get(route.handler)!].filter(
        (s) => (route.writes || !WRITE_MIDDLEWARE.has(s)) && s !== STORED_SECRETS_REPO && s !== SESSIONS_REPO,
      );
      const configOnly = stores.every((s) => CONFIG_ONLY.has(s));
      const declared = route.table === 'config' || route.table === 'none';
      expect([route.handler, stores.sort(), declared]).toEqual([route.handler, stores, configOnly]);
    }
  });

  it('declares cursors exactly on the read routes that sign or check pagination cursors', () => {
    for (const route of (routes as readonly RouteSpec[]).filter((r) => !r.writes)) {
      const signs = used.get(route.handler)!.has('cursor.ts');
      expect([route.handler, route.cursors === true]).toEqual([route.handler, signs]);
    }
    // Some do, some do not: the flag is not constant.
    const flags = new Set(routes.filter((r) => !r.writes).map((r) => (r as RouteSpec).cursors === true));
    expect([...flags].sort()).toEqual([false, true]);
  });

  it('derives each route function grant from those declarations', () => {
    const access = Object.fromEntries((routes as readonly RouteSpec[]).map((r) => [r.handler, tableAccessOf(r)]));
    expect(access).toMatchObject({
      'health/get': 'none',
      'config/get': 'config',
      'doc/get': 'config',
      'doc/reference': 'config',
      'chats/list': 'readCursors',
      'messages/list': 'readCursors',
      'media/list': 'readCursors',
      'search/get': 'readCursors',
      'chats/get': 'read',
      'files/get': 'read',
      'chats/create': 'readWrite',
    });
  });
});
