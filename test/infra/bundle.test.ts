/**
 * A function's bundle as ApiFunction builds it (lib/constructs/bundle.ts, run the way the
 * construct runs it: tsx in a child process), checked on one route: what it leaves out (classic
 * zod, zod's other locales, the SDK's credential chain beyond the environment,
 * chunks no code loads, any Secrets Manager client), what it reads at init and what only on first
 * use (event-stream decoding), its source maps beside it and not loaded at init, and that it
 * still works from the bundle alone in a fresh Node 22 process: zod's English messages and field
 * errors, SDK calls signed with the credentials Lambda puts in the environment (against a
 * stand-in DynamoDB on loopback), and the instance secret read from its table item (the same
 * stand-in answers the BatchGetItem).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { httpEntry } from '../../lib/constructs/api-function.js';
import { projectRoot } from '../../lib/constructs/function-asset.js';
import { initFiles } from '../bench/bundles.js';

let outdir: string;
/** Every .mjs of the bundle, by path relative to outdir. */
let modules: Map<string, string>;
/** All of them, joined: what the bundle holds anywhere. */
let code: string;
/** The files a cold start reads (index.mjs and the chunks it imports statically). */
let atInit: string[];

const node22 = () => {
  const pinned = join(projectRoot, 'node_modules', 'node', 'bin', 'node');
  return existsSync(pinned) ? pinned : process.execPath;
};

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'chat-relay-bundle-'));
  const request = JSON.stringify({ entry: httpEntry('chats/list'), outdir, external: [] });
  const built = spawnSync(
    join(projectRoot, 'node_modules', '.bin', 'tsx'),
    [join(projectRoot, 'lib', 'constructs', 'bundle.ts'), request],
    { cwd: projectRoot, encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`bundling failed: ${built.stderr}`);
  const paths = readdirSync(outdir, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.mjs'));
  modules = new Map(paths.map((path) => [path.split('\\').join('/'), readFileSync(join(outdir, path), 'utf8')]));
  code = [...modules.values()].join('\n');
  atInit = await initFiles(outdir);
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/**
 * Runs the bundle's handler on one API Gateway event in a fresh Node 22 process outside the
 * project. One loopback server stands in for DynamoDB: every call answers `{}`, but, when `secret`
 * is given, BatchGetItem answers the table's SECRET#INSTANCE item holding it (store/secrets-repo.ts).
 */
function invoke(
  query: Record<string, string>,
  options: { secret?: string; headers?: Record<string, string>; instanceConfig?: unknown } = {},
) {
  const script = `
    import { createServer } from 'node:http';
    const targets = [];
    let authorization = '';
    const secret = ${JSON.stringify(options.secret ?? null)};
    const server = createServer((req, res) => {
      const target = String(req.headers['x-amz-target']);
      targets.push(target);
      authorization = String(req.headers.authorization ?? '');
      req.resume().on('end', () => {
        res.setHeader('content-type', 'application/x-amz-json-1.0');
        const item = { pk: { S: 'SECRET#INSTANCE' }, sk: { S: 'SECRET' }, value: { S: secret } };
        res.end(target === 'DynamoDB_20120810.BatchGetItem' && secret !== null
          ? JSON.stringify({ Responses: { 'bundle-test': [item] }, UnprocessedKeys: {} })
          : '{}');
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const endpoint = 'http://127.0.0.1:' + server.address().port;
    process.env.DYNAMODB_ENDPOINT = endpoint;
    const { handler } = await import(${JSON.stringify(pathToFileURL(join(outdir, 'index.mjs')).href)});
    const query = ${JSON.stringify(query)};
    const rawQueryString = new URLSearchParams(query).toString();
    const response = await handler(
      {
        version: '2.0', routeKey: 'GET /api/v1/chats', rawPath: '/api/v1/chats', rawQueryString,
        headers: ${JSON.stringify(options.headers ?? {})}, queryStringParameters: query, isBase64Encoded: false,
        requestContext: { http: { method: 'GET', path: '/api/v1/chats', sourceIp: '203.0.113.1' }, requestId: 'r1' },
      },
      { awsRequestId: 'r1', getRemainingTimeInMillis: () => 10_000 },
    );
    server.close();
    process.stdout.write(JSON.stringify({ response, targets, authorization }));
  `;
  const child = spawnSync(node22(), ['--input-type=module', '-e', script], {
    cwd: outdir,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDLAMBDAROLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_SESSION_TOKEN: 'token',
      TABLE_NAME: 'bundle-test',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...(options.secret === undefined ? {} : { INSTANCE_SECRET_IN_TABLE: '1', STORED_SECRETS: 'INSTANCE' }),
      ...(options.instanceConfig === undefined ? {} : { INSTANCE_CONFIG: JSON.stringify(options.instanceConfig) }),
    },
  });
  if (child.status !== 0) throw new Error(`the bundle failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout) as {
    response: { statusCode: number; body: string };
    targets: string[];
    authorization: string;
  };
}

describe('a function bundle', () => {
  it("leaves out zod's other locales and the SDK's credential chain beyond the environment", () => {
    // English stays (functions/platform/zod.ts selects it); German and Catalan are gone (esbuild
    // writes ASCII: "Ungültige Eingabe" becomes "Ung\xFCltige Eingabe").
    expect(code).toContain('Invalid input');
    expect(code).not.toContain('Eingabe');
    expect(code).not.toContain('Entrada inv');
    // keepNames keeps these function names wherever their code is in the bundle.
    for (const provider of ['fromSSO', 'fromIni', 'fromProcess', 'fromTokenFile', 'fromInstanceMetadata']) {
      expect([provider, code.includes(`"${provider}"`)]).toEqual([provider, false]);
    }
    expect(code).toContain('Unable to find environment variable credentials');
    // zod/mini only (keepNames keeps each schema class's name): no classic schema, hence none of
    // the JSON Schema converters every classic schema references.
    expect(code).toContain('"ZodMiniObject"');
    expect(code).not.toContain('"ZodObject"');
    expect(code).not.toContain('Cannot convert to JSON Schema');
  });

  it('reads at init only what every request needs; the rest is in chunks loaded on first use', () => {
    const initCode = atInit.map((path) => modules.get(path)!).join('\n');
    expect(atInit).toContain('index.mjs');
    // No Secrets Manager client anywhere: the secrets are table items, read with the DynamoDB client.
    for (const gone of ['secretsmanager', 'GetSecretValue', 'SecretsManagerClient']) {
      expect([gone, code.includes(gone)]).toEqual([gone, false]);
    }
    expect(initCode).toContain('BatchGetItem');
    // No chunk that nothing imports (esbuild makes one per import(), even in removed code).
    for (const [path] of modules) {
      if (path === 'index.mjs') continue;
      const name = path.split('/').pop()!;
      expect([path, [...modules.values()].some((other) => other.includes(`/${name}"`))]).toEqual([path, true]);
    }
    // A regression guard, not the goal (test/bench/bundles.ts measures every function).
    const initBytes = atInit.reduce((total, path) => total + statSync(join(outdir, path)).size, 0);
    expect(initBytes).toBeLessThan(400 * 1024);
  });

  it('keeps each source map beside its file, named from the project root, referenced but not loaded at init (no NODE_OPTIONS)', () => {
    expect(modules.size).toBeGreaterThan(1);
    for (const [path, text] of modules) {
      const name = path.split('/').pop()!;
      expect([path, existsSync(join(outdir, `${path}.map`))]).toEqual([path, true]);
      expect([path, text.trimEnd().endsWith(`//# sourceMappingURL=${name}.map`)]).toEqual([path, true]);
      // Sources named from the project root, wherever the bundle was built (chunks/ included):
      // the same files then hash the same, so CDK names the asset the same on every machine.
      const map = JSON.parse(readFileSync(join(outdir, `${path}.map`), 'utf8')) as { sources: string[] };
      const outside = map.sources.filter((source) => source.startsWith('../') || source.startsWith('/'));
      expect([path, outside]).toEqual([path, []]);
      if (path === 'index.mjs') expect(map.sources).toContain('functions/http/chats/list.ts');
      // Every chunk may meet CommonJS code that calls require.
      expect([path, text.startsWith("import { createRequire as __houseCreateRequire } from 'node:module';")]).toEqual([
        path,
        true,
      ]);
    }
  });

  it("answers with zod's English messages and field errors, its SDK calls signed with Lambda's env credentials", () => {
    const { response, targets, authorization } = invoke({ limit: 'abc', archived: 'maybe' });
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'Request validation failed.',
        details: {
          formErrors: [],
          fieldErrors: { limit: ['Expected an integer'], archived: ['Invalid option: expected one of "true"|"false"'] },
        },
      },
    });
    // The live configuration's read reached the stand-in table, signed with the environment's key.
    expect(targets).toContain('DynamoDB_20120810.GetItem');
    expect(authorization).toContain('Credential=AKIDLAMBDAROLE/');
  });

  it("reads the instance secret from the table's SECRET#INSTANCE item (one BatchGetItem), and enforces it", () => {
    const instanceConfig = { security: { readEndpointsRequireInstanceSecret: true } };
    const secret = 'bundle-test-instance-secret';
    const refused = invoke({}, { secret, instanceConfig });
    expect(refused.targets.filter((t) => t.endsWith('.BatchGetItem'))).toEqual(['DynamoDB_20120810.BatchGetItem']);
    expect(refused.targets.some((t) => t.startsWith('secretsmanager.'))).toBe(false);
    expect(refused.authorization).toContain('Credential=AKIDLAMBDAROLE/');
    expect(refused.response.statusCode).toBe(401);
    expect(JSON.parse(refused.response.body).error.code).toBe('UNAUTHORIZED');

    const wrong = invoke({}, { secret, instanceConfig, headers: { authorization: 'Bearer not-the-secret' } });
    expect(wrong.response.statusCode).toBe(401);
    // The right secret passes authentication (the stand-in table then answers the query).
    const admitted = invoke(
      { limit: 'abc' },
      { secret, instanceConfig, headers: { authorization: `Bearer ${secret}` } },
    );
    expect(admitted.response.statusCode).toBe(400);
    expect(JSON.parse(admitted.response.body).error.code).toBe('VALIDATION_ERROR');
  });
});
