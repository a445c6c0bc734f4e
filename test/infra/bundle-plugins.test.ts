/**
 * The esbuild plugins and the chunk pruning of lib/constructs/bundle.ts, each on a small fixture
 * bundled as ApiFunction bundles a function, then run from its output folder in a fresh Node
 * process and compared with the same fixture run from its sources:
 * - oneSdkClientCopy and sdkSchemaLiteralKeys: one client-s3 in the bundle, without the schemas
 *   of the operations not sent, and the same presigned POST;
 * - unreachableChunks: a chunk for code tree shaking removed is deleted; a used one loads.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Metafile } from 'esbuild';
import { projectRoot } from '../../lib/constructs/function-asset.js';
import { bundle } from '../../lib/constructs/bundle.js';
import { presign } from './fixtures/presigned-post.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
const folders: string[] = [];
afterAll(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function build(name: string) {
  const outdir = mkdtempSync(join(tmpdir(), `chat-relay-plugins-${name}-`));
  folders.push(outdir);
  const metafile = `${outdir}.meta.json`;
  folders.push(metafile);
  await bundle({ entry: fixture(name), outdir, external: [], metafile });
  const modules = readdirSync(outdir, { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.mjs'));
  return {
    outdir,
    modules,
    code: modules.map((path) => readFileSync(join(outdir, path), 'utf8')).join('\n'),
    meta: JSON.parse(readFileSync(metafile, 'utf8')) as Metafile,
  };
}

/** Calls `exported()` of the bundle in a fresh Node 22 process from its folder; its JSON answer. */
function run(outdir: string, exported: string): unknown {
  const pinned = join(projectRoot, 'node_modules', 'node', 'bin', 'node');
  const url = pathToFileURL(join(outdir, 'index.mjs')).href;
  const script = `const m = await import(${JSON.stringify(url)}); process.stdout.write(JSON.stringify(await m.${exported}()));`;
  const child = spawnSync(existsSync(pinned) ? pinned : process.execPath, ['--input-type=module', '-e', script], {
    cwd: outdir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '' },
  });
  if (child.status !== 0) throw new Error(`the bundle failed (${child.status}): ${child.stderr}`);
  return JSON.parse(child.stdout);
}

describe('bundle plugins', () => {
  it('bundles one copy of client-s3 with only the schemas it sends, and presigns the same POST', async () => {
    const { outdir, code, meta } = await build('presigned-post');
    const inputs = Object.keys(meta.inputs);
    expect(inputs.some((path) => path.includes('s3-presigned-post/node_modules/@aws-sdk/client-s3'))).toBe(false);
    expect(inputs.filter((path) => /client-s3\/dist-es\/schemas\/schemas_0\.js$/.test(path))).toHaveLength(1);
    // An operation this code never sends: its schema is gone; the sent one stays.
    expect(code).not.toContain('PutBucketAnalyticsConfiguration');
    expect(code).toContain('HeadObjectRequest');

    const fromSources = await presign();
    expect(fromSources.url).toBe('https://media.s3.eu-west-1.amazonaws.com/');
    expect(run(outdir, 'presign')).toEqual(JSON.parse(JSON.stringify(fromSources)));
  });

  it('ships the chunk of a used import() and deletes the one of code that tree shaking removed', async () => {
    const { outdir, modules, code, meta } = await build('lazy-entry');
    expect(modules).toContain('index.mjs');
    expect(modules.filter((path) => path.startsWith('chunks/lazy-used-'))).toHaveLength(1);
    expect(modules.filter((path) => path.includes('lazy-dead'))).toEqual([]);
    expect(code).not.toContain('LAZY-DEAD-MARK');
    expect(Object.keys(meta.outputs).some((path) => meta.outputs[path]!.inputs[fixture('lazy-dead')])).toBe(false);
    for (const path of modules) expect(existsSync(join(outdir, `${path}.map`))).toBe(true);
    expect(run(outdir, 'handler')).toBe('used chunk answered');
  });
});
