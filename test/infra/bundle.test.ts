/**
 * A function's bundle as ApiFunction builds it (lib/constructs/bundle.ts, run the way the
 * construct runs it: tsx in a child process), checked on one route: what it leaves out (zod's
 * other locales, the SDK's credential chain beyond the environment), its source map beside it
 * and not loaded at init, and that it still works from the bundle alone in a fresh Node 22
 * process: zod's English messages and field errors, and SDK calls signed with the credentials
 * Lambda puts in the environment (against a stand-in DynamoDB on loopback).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { httpEntry, projectRoot } from '../../lib/constructs/api-function.js';

let outdir: string;
let code: string;

const node22 = () => {
  const pinned = join(projectRoot, 'node_modules', 'node', 'bin', 'node');
  return existsSync(pinned) ? pinned : process.execPath;
};

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'chat-relay-bundle-'));
  const request = JSON.stringify({ entry: httpEntry('chats/list'), outdir, external: [] });
  const built = spawnSync(
    join(projectRoot, 'node_modules', '.bin', 'tsx'),
    [join(projectRoot, 'lib', 'constructs', 'bundle.ts'), request],
    { cwd: projectRoot, encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(`bundling failed: ${built.stderr}`);
  code = readFileSync(join(outdir, 'index.mjs'), 'utf8');
});
afterAll(() => rmSync(outdir, { recursive: true, force: true }));

/** Runs the bundle's handler on one API Gateway event in a fresh Node 22 process outside the project. */
function invoke(query: Record<string, string>) {
  const script = `
    import { createServer } from 'node:http';
    const targets = [];
    let authorization = '';
    const server = createServer((req, res) => {
      targets.push(req.headers['x-amz-target']);
      authorization = String(req.headers.authorization ?? '');
      req.resume().on('end', () => {
        res.setHeader('content-type', 'application/x-amz-json-1.0');
        res.end('{}');
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    process.env.DYNAMODB_ENDPOINT = 'http://127.0.0.1:' + server.address().port;
    const { handler } = await import(${JSON.stringify(pathToFileURL(join(outdir, 'index.mjs')).href)});
    const query = ${JSON.stringify(query)};
    const rawQueryString = new URLSearchParams(query).toString();
    const response = await handler(
      {
        version: '2.0', routeKey: 'GET /api/v1/chats', rawPath: '/api/v1/chats', rawQueryString,
        headers: {}, queryStringParameters: query, isBase64Encoded: false,
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
    // English stays (zod configures it on load); German and Catalan are gone (esbuild writes ASCII:
    // "Ungültige Eingabe" becomes "Ung\xFCltige Eingabe").
    expect(code).toContain('Invalid input');
    expect(code).not.toContain('Eingabe');
    expect(code).not.toContain('Entrada inv');
    // keepNames keeps these function names wherever their code is in the bundle.
    for (const provider of ['fromSSO', 'fromIni', 'fromProcess', 'fromTokenFile', 'fromInstanceMetadata']) {
      expect([provider, code.includes(`"${provider}"`)]).toEqual([provider, false]);
    }
    expect(code).toContain('Unable to find environment variable credentials');
    // A regression guard, not the goal (test/bench/bundles.ts measures every function).
    expect(statSync(join(outdir, 'index.mjs')).size).toBeLessThan(500 * 1024);
  });

  it('keeps its source map beside it, referenced but not loaded at init (no NODE_OPTIONS)', () => {
    expect(existsSync(join(outdir, 'index.mjs.map'))).toBe(true);
    expect(code.trimEnd().endsWith('//# sourceMappingURL=index.mjs.map')).toBe(true);
    expect(code.startsWith("import { createRequire as __houseCreateRequire } from 'node:module';")).toBe(true);
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
});
