/**
 * `BENCH_ONLY=bundles`: what each Lambda function costs before its first request. Synthesizes
 * the stack (`cdk synth --quiet` into a temporary folder: esbuild for every function, offline),
 * then for every function of the template: its bundle's size and the time a fresh Node 22
 * process takes to import it (median of 5, each in its own process, from the asset folder so
 * nothing resolves from the project), with the function's own NODE_OPTIONS if the template sets
 * any. Functions that share a bundle (a route and its alias) are measured once.
 *
 * A bundle is index.mjs and its chunks (lib/constructs/bundle.ts splits at every `import()`):
 * `bytes` is what a cold start reads, index.mjs and the chunks it imports statically (found
 * with esbuild's own parser, initFiles); `allBytes` adds the chunks loaded on first use only.
 * Source maps are beside them and never loaded at init. Goals (issue 16): <= 250 KB and <= 150 ms.
 *
 * Beside them, the floors (test/bench/floor/): the smallest handlers ARCHITECTURE.md allows (middy,
 * the Powertools logger, a zod/mini schema and the bundled AWS SDK clients a route needs), bundled
 * with the functions' own options. No function that needs those clients can be smaller.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { bundle } from '../../lib/constructs/bundle.js';
import { textTable } from './stats.js';

const RUNS = 5;
export const BUNDLE_GOALS = { bytes: 250 * 1024, importMs: 150 } as const;

export interface BundleSample {
  /** Construct path without the stack and `/Resource`, e.g. `Api/Chats/GetApiV1Chats`. */
  functions: string[];
  /** http, stream, job, doc. */
  kind: string;
  /** index.mjs and the chunks it imports statically: what a cold start reads. */
  bytes: number;
  /** Every .mjs of the bundle, the chunks loaded on first use included. */
  allBytes: number;
  /** How many .mjs files the bundle has, and how many of them a cold start reads. */
  files: { all: number; init: number };
  mapBytes: number;
  importMs: { median: number; runs: number[] };
}

/** A floor handler (test/bench/floor/<name>.ts), measured like a function's bundle. */
export interface FloorSample {
  name: string;
  what: string;
  bytes: number;
  importMs: number;
}

/** The floors, and the functions each one bounds. */
export const FLOORS = [
  { name: 'table', what: 'middy + logger + zod/mini + DynamoDB document client (every route)' },
  { name: 'table-queue', what: 'table + SQS client (the writes that signal dispatch or a stream timer)' },
  { name: 'table-media', what: 'table + S3 client (the media routes)' },
] as const;

export interface BundleReport {
  node: string;
  synthMs: number;
  bundles: BundleSample[];
  /** Absent in results written before the floors were measured. */
  floors?: FloorSample[];
  summary: {
    count: number;
    bytes: Stats;
    allBytes: Stats;
    importMs: Stats;
    overBytes: number;
    overImportMs: number;
  };
}

interface Stats {
  median: number;
  max: number;
  min: number;
}

/** Node 22 as pinned by the project (the Lambda runtime's version), whatever Node runs the bench. */
function node22(): string {
  const pinned = resolve('node_modules', 'node', 'bin', 'node');
  return existsSync(pinned) ? pinned : process.execPath;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const stats = (values: number[]): Stats => ({
  median: median(values),
  max: Math.max(...values),
  min: Math.min(...values),
});

function kindOf(path: string, description: string): string {
  // A route's function is at Api/<Area>/<RouteId> (lib/constructs/api-area.ts), the fallback at Api/Fallback.
  if (/^Api\/(\w+\/)?GetApiV1(Doc|Reference)$/.test(path)) return 'doc';
  if (path.startsWith('Api/')) return 'http';
  if (path.startsWith('EventStream/')) return 'stream';
  return description ? 'job' : 'other';
}

/** The total size of these files of a folder. */
const bytesOf = (dir: string, paths: string[]): number =>
  paths.reduce((total, path) => total + statSync(join(dir, path)).size, 0);

/** Every file below a folder (relative paths, `/`-separated). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => statSync(join(dir, path)).isFile())
    .map((path) => path.split('\\').join('/'));
}

/**
 * The bundle's files that a cold start reads: index.mjs and, transitively, every file of the
 * asset it imports with an import statement (not `import()`). esbuild parses them (a build
 * that writes nothing, packages and Node built-ins left external); its metafile tells static
 * imports from dynamic ones.
 */
export async function initFiles(assetDir: string): Promise<string[]> {
  const { metafile } = await esbuild.build({
    entryPoints: [join(assetDir, 'index.mjs')],
    absWorkingDir: assetDir,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const found = new Set<string>();
  const visit = (path: string) => {
    if (found.has(path)) return;
    found.add(path);
    for (const edge of metafile.inputs[path]?.imports ?? []) {
      if (edge.kind === 'import-statement' && !edge.external) visit(edge.path);
    }
  };
  visit('index.mjs');
  return [...found].sort();
}

/** One cold import of the bundle in a fresh process; the time is measured inside it, around import(). */
function importOnce(node: string, assetDir: string, nodeOptions: string | undefined): number {
  const url = pathToFileURL(join(assetDir, 'index.mjs')).href;
  // The Lambda runtime's global that response-streaming handlers (the event stream) call at load.
  const runtimeGlobal =
    'globalThis.awslambda = { streamifyResponse: (f) => f, HttpResponseStream: { from: (s) => s } };';
  const script =
    `${runtimeGlobal} const t = performance.now(); await import(${JSON.stringify(url)}); ` +
    'process.stdout.write(String(performance.now() - t));';
  const child = spawnSync(node, ['--input-type=module', '-e', script], {
    cwd: assetDir,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      PATH: process.env.PATH ?? '',
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_LAMBDA_FUNCTION_NAME: 'bench',
      TABLE_NAME: 'bench',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    },
  });
  const ms = Number(child.stdout);
  if (child.status !== 0 || !Number.isFinite(ms)) {
    const why = String(child.stderr || child.error).slice(-2000);
    throw new Error(`Importing ${assetDir}/index.mjs failed (${child.status}): ${why}`);
  }
  return ms;
}

export async function runBundleScenarios(log: (line: string) => void): Promise<{ bundles: BundleReport }> {
  const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-bundles-'));
  try {
    log('Bundles: cdk synth (esbuild for every function)...');
    const started = performance.now();
    const synth = spawnSync('npx', ['cdk', 'synth', '--quiet', '-o', outdir], { encoding: 'utf8' });
    if (synth.status !== 0) throw new Error(`cdk synth failed (${synth.status}): ${synth.stderr}`);
    const synthMs = performance.now() - started;

    // The root template and its nested stacks' (the API's areas, lib/constructs/api-area.ts).
    const templates = readdirSync(outdir)
      .filter((file) => /^ChatRelay(\.|[A-Za-z0-9]+\.nested\.)template\.json$/.test(file))
      .map(
        (file) =>
          JSON.parse(readFileSync(join(outdir, file), 'utf8')) as {
            Resources: Record<string, { Type: string; Metadata?: Record<string, string>; Properties?: any }>;
          },
      );
    const byAsset = new Map<string, { functions: string[]; kind: string; nodeOptions: string | undefined }>();
    for (const resource of templates.flatMap((template) => Object.values(template.Resources))) {
      const asset = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::Lambda::Function' || !asset) continue;
      // Ours only: the CDK custom-resource framework's own function (stored-secrets.ts) is not an esbuild bundle.
      if (!existsSync(join(outdir, asset, 'index.mjs'))) continue;
      const path = String(resource.Metadata?.['aws:cdk:path'] ?? '')
        .replace(/^ChatRelay\//, '')
        .replace(/\/Resource$/, '');
      const nodeOptions = resource.Properties?.Environment?.Variables?.NODE_OPTIONS as string | undefined;
      const entry = byAsset.get(asset) ?? {
        functions: [],
        kind: kindOf(path, resource.Properties?.Description ?? ''),
        nodeOptions,
      };
      entry.functions.push(path);
      byAsset.set(asset, entry);
    }

    const node = node22();
    const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    log(`Bundles: importing ${byAsset.size} bundles ${RUNS} times each in fresh Node ${nodeVersion} processes...`);
    const bundles: BundleSample[] = [];
    for (const [asset, { functions, kind, nodeOptions }] of byAsset) {
      const dir = join(outdir, asset);
      const runs = Array.from({ length: RUNS }, () => importOnce(node, dir, nodeOptions));
      const files = filesUnder(dir);
      const size = (paths: string[]) => bytesOf(dir, paths);
      const modules = files.filter((path) => path.endsWith('.mjs') && !path.startsWith('node_modules/'));
      const atInit = await initFiles(dir);
      bundles.push({
        functions: functions.sort(),
        kind,
        bytes: size(atInit),
        allBytes: size(modules),
        files: { all: modules.length, init: atInit.length },
        mapBytes: size(files.filter((path) => path.endsWith('.mjs.map') && !path.startsWith('node_modules/'))),
        importMs: { median: median(runs), runs },
      });
    }
    bundles.sort((a, b) => a.bytes - b.bytes);
    log('Bundles: the floors (test/bench/floor/)...');
    const floors: FloorSample[] = [];
    for (const { name, what } of FLOORS) {
      const dir = join(outdir, `floor-${name}`);
      await bundle({ entry: resolve('test', 'bench', 'floor', `${name}.ts`), outdir: dir, external: [] });
      const atInit = await initFiles(dir);
      const bytes = bytesOf(dir, atInit);
      floors.push({
        name,
        what,
        bytes,
        importMs: median(Array.from({ length: RUNS }, () => importOnce(node, dir, undefined))),
      });
    }
    const report: BundleReport = {
      node: nodeVersion,
      synthMs,
      bundles,
      floors,
      summary: {
        count: bundles.length,
        bytes: stats(bundles.map((b) => b.bytes)),
        allBytes: stats(bundles.map((b) => b.allBytes)),
        importMs: stats(bundles.map((b) => b.importMs.median)),
        overBytes: bundles.filter((b) => b.bytes > BUNDLE_GOALS.bytes).length,
        overImportMs: bundles.filter((b) => b.importMs.median > BUNDLE_GOALS.importMs).length,
      },
    };
    return { bundles: report };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const kb = (bytes: number) => (bytes / 1024).toFixed(0);

export function bundleTables(report: BundleReport): string {
  const rows = report.bundles.map((b) => [
    b.functions.join(', '),
    b.kind,
    kb(b.bytes),
    kb(b.allBytes),
    `${b.files.init}/${b.files.all}`,
    kb(b.mapBytes),
    b.importMs.median.toFixed(0),
    `${b.bytes > BUNDLE_GOALS.bytes ? 'size' : ''}${b.importMs.median > BUNDLE_GOALS.importMs ? ' import' : ''}`.trim(),
  ]);
  const perFunction = textTable(
    ['function(s)', 'kind', 'KB at init', 'KB all', 'files init/all', 'maps KB', 'import ms', 'over goal'],
    rows,
  );
  const kinds = [...new Set(report.bundles.map((b) => b.kind))].sort();
  const perKind = textTable(
    ['kind', 'bundles', 'KB median', 'KB max', 'import ms median', 'import ms max'],
    kinds.map((kind) => {
      const group = report.bundles.filter((b) => b.kind === kind);
      const bytes = stats(group.map((b) => b.bytes));
      const ms = stats(group.map((b) => b.importMs.median));
      return [kind, String(group.length), kb(bytes.median), kb(bytes.max), ms.median.toFixed(0), ms.max.toFixed(0)];
    }),
  );
  const { summary: s } = report;
  const total =
    `${s.count} bundles: size at init median ${kb(s.bytes.median)} KB, max ${kb(s.bytes.max)} KB (all chunks: ` +
    `median ${kb(s.allBytes.median)} KB, max ${kb(s.allBytes.max)} KB); import median ` +
    `${s.importMs.median.toFixed(0)} ms, max ${s.importMs.max.toFixed(0)} ms; over ${kb(BUNDLE_GOALS.bytes)} KB: ` +
    `${s.overBytes}, over ${BUNDLE_GOALS.importMs} ms: ${s.overImportMs}`;
  const floors = report.floors
    ? '\n\nFloors: the smallest handlers ARCHITECTURE.md allows, bundled the same way (test/bench/floor/)\n' +
      textTable(
        ['floor', 'what', 'KB at init', 'import ms'],
        report.floors.map((f) => [f.name, f.what, kb(f.bytes), f.importMs.toFixed(0)]),
      )
    : '';
  return `${perFunction}\n\n${perKind}\n\n${total}${floors}`;
}
