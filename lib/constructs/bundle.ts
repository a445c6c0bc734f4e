/**
 * How a function's bundle is built: esbuild's JavaScript API (aws-cdk-lib's NodejsFunction runs
 * the esbuild CLI, which takes no plugins), run by ApiFunction's local bundling in a child
 * process (`tsx lib/constructs/bundle.ts --batch <file>`, lib/constructs/local-bundle.ts) because CDK's local bundling is synchronous
 * and esbuild runs plugins only in its asynchronous build. Offline, no Docker.
 *
 * Output: `<outdir>/index.mjs`, minified ESM for Node 22, and `<outdir>/chunks/*.mjs`: esbuild
 * splits at every `import()`, so a module that only some requests need (web-push, the S3
 * presigners, the Step Functions client, sharp) is read on its first
 * use, not at init; chunks that no code can load are deleted (unreachableChunks). Each file has
 * its `.map` beside it (the functions do not load them at init: no --enable-source-maps; they
 * are there for debugging).
 *
 * What keeps the bundles small and quick to import (each measured by `BENCH_ONLY=bundles npm run
 * bench`, test/bench/bundles.ts):
 * - Functions take zod/mini (functions/platform/zod.ts; lint refuses any other zod import), whose
 *   schemas are plain values built by functions: esbuild keeps only the schema kinds and checks
 *   a function uses (classic zod's methods kept every kind, ~90 KB), and of zod's locales only
 *   the English one that module imports (no plugin needed: measured, the same bytes with one).
 * - lambdaCredentials: the SDK's default credential chain (env, SSO, ini files, processes, web
 *   identity, ECS/EC2 metadata, with the STS/SSO clients they need: ~100 KB) becomes its first
 *   link only, the environment, which is where Lambda puts the function's role credentials
 *   (lambda-credentials.ts).
 * - oneSdkClientCopy, sdkSchemaLiteralKeys, sdkManifestVersionOnly: one copy of each SDK client,
 *   only the operation schemas a function uses, and only the version of each client's manifest.
 *
 * Kept on purpose: keepNames (~7% of a bundle). The SDK tells its logger apart by class name
 * (`constructor.name === 'NoOpLogger'`, else its warnings would be swallowed) and falls back to
 * class names in `instanceof` of service exceptions. The AWS SDK is bundled, not taken from
 * the runtime: the runtime's copy is whatever version AWS ships at the time (not ours, and it
 * changes without a deploy), and importing it at init costs the same work from another folder.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

/** ESM output still meets CommonJS dependencies that call `require`; esbuild's shim needs one. */
export const REQUIRE_BANNER =
  "import { createRequire as __houseCreateRequire } from 'node:module'; const require = " +
  '__houseCreateRequire(import.meta.url);';

const here = dirname(fileURLToPath(import.meta.url));
const projectRoot = join(here, '..', '..');

export interface BundleRequest {
  /** Absolute path of the handler module. */
  entry: string;
  /** Folder that receives index.mjs and index.mjs.map. */
  outdir: string;
  /** Packages left out of the bundle (sharp for an images function). */
  external: string[];
  /** Write esbuild's metafile as `<outdir>/../<name>` (the bench's size breakdown). @default none */
  metafile?: string;
}

export const lambdaCredentials: esbuild.Plugin = {
  name: 'lambda-credentials',
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({
      path: join(here, 'lambda-credentials.ts'),
    }));
  },
};

/**
 * One copy of each AWS SDK client: a package that pins another version of a client (today
 * @aws-sdk/s3-presigned-post pins client-s3 3.1164.0 beside our 3.1173.0, and takes only
 * PutObjectCommand's endpoint parameters from it) gets the project's copy, so the bundle does not
 * carry two S3 clients (~90 KB). Same major version, same command shapes.
 */
export const oneSdkClientCopy: esbuild.Plugin = {
  name: 'one-sdk-client-copy',
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/client-[a-z0-9-]+$/ }, async (args) => {
      if (!/[\/]node_modules[\/]/.test(args.importer)) return undefined;
      const pluginData = { oneSdkClientCopy: true };
      if ((args.pluginData as typeof pluginData | undefined)?.oneSdkClientCopy) return undefined;
      const result = await build.resolve(args.path, { kind: args.kind, resolveDir: projectRoot, pluginData });
      return result.errors.length > 0 ? undefined : { path: result.path, sideEffects: result.sideEffects };
    });
  },
};

/**
 * The SDK clients' schema modules (`@aws-sdk/client-*\/dist-es/schemas/schemas_0.js`) describe
 * every operation of the service as `export var X$ = [...]`, with traits written as computed keys
 * of module constants (`{ [_hH]: _xaebo }`). esbuild cannot prove such a key free of side effects
 * (a computed key may call toString), so it keeps every schema of the service: all of S3's ~600
 * (68 KB minified) for the two or three operations a function sends. Each such key is rewritten
 * to the constant's string literal (`{ ["x-amz-expected-bucket-owner"]: _xaebo }`): the same
 * object, and unused schemas are then dropped.
 */
export const sdkSchemaLiteralKeys: esbuild.Plugin = {
  name: 'sdk-schema-literal-keys',
  setup(build) {
    build.onLoad(
      { filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]dist-es[\\/]schemas[\\/]schemas_\d+\.js$/ },
      async ({ path }) => {
        const source = await readFile(path, 'utf8');
        const strings = new Map<string, string>();
        for (const [, name, literal] of source.matchAll(/^const (\w+) = ("(?:[^"\\\n]|\\.)*");$/gm)) {
          strings.set(name!, literal!);
        }
        const contents = source.replace(/\[(\w+)\]:/g, (key, name: string) => {
          const literal = strings.get(name);
          return literal === undefined ? key : `[${literal}]:`;
        });
        return { contents, loader: 'js', resolveDir: dirname(path) };
      },
    );
  },
};

export function bundleOptions(request: BundleRequest): esbuild.BuildOptions {
  return {
    entryPoints: [request.entry],
    // index.mjs, and one chunk per module imported with `import()` (chunks/*.mjs, each with its
    // map): code a function needs only on some paths is not read at init.
    outdir: request.outdir,
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    splitting: true,
    absWorkingDir: projectRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    keepNames: true,
    // Each map's sources are made relative to the project afterwards (projectRelativeMaps).
    sourcemap: true,
    banner: { js: REQUIRE_BANNER },
    external: request.external,
    logLevel: 'warning',
    // Always: bundle() reads it to drop the chunks no code can load (unreachableChunks).
    metafile: true,
    plugins: [lambdaCredentials, oneSdkClientCopy, sdkSchemaLiteralKeys, sdkManifestVersionOnly],
  };
}

/**
 * Each SDK client reads its own package.json for one field, `version` (the user agent), but a
 * default JSON import keeps the whole manifest (~2.4 KB minified per client). The bundles get
 * the name and version only.
 */
export const sdkManifestVersionOnly: esbuild.Plugin = {
  name: 'sdk-manifest-version-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]@aws-sdk[\\/]client-[^\\/]+[\\/]package\.json$/ }, async ({ path }) => {
      const { name, version } = JSON.parse(await readFile(path, 'utf8')) as { name: string; version: string };
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

/**
 * The output files that nothing can load. With splitting, esbuild emits a chunk for every
 * `import()` it meets, even one in code that tree shaking then removed (upload-session imports
 * media-upload.ts for presigning, and with it images.ts, whose `import('sharp')` it never runs):
 * such a chunk is never read, but it would still ship, and it would carry sharp into a function
 * that has no sharp runtime (ApiFunction's check refuses that). Reachable: index.mjs, and every
 * output imported, statically or with `import()`, by a reachable one.
 */
export function unreachableChunks(metafile: esbuild.Metafile, entry: string): string[] {
  const outputs = metafile.outputs;
  const index = Object.keys(outputs).find((path) => outputs[path]!.entryPoint === entry);
  if (!index) throw new Error(`esbuild wrote no output for ${entry}`);
  const reachable = new Set<string>();
  const visit = (path: string) => {
    if (reachable.has(path) || !outputs[path]) return;
    reachable.add(path);
    for (const edge of outputs[path].imports) if (!edge.external) visit(edge.path);
  };
  visit(index);
  return Object.keys(outputs).filter((path) => !path.endsWith('.map') && !reachable.has(path));
}

export async function bundle(request: BundleRequest): Promise<esbuild.BuildResult> {
  const options = bundleOptions(request);
  const result = await esbuild.build(options);
  const metafile = result.metafile!;
  const entry = relative(projectRoot, request.entry).split(sep).join('/');
  for (const chunk of unreachableChunks(metafile, entry)) {
    for (const file of [chunk, `${chunk}.map`]) {
      await rm(join(projectRoot, file), { force: true });
      delete metafile.outputs[file];
    }
  }
  await projectRelativeMaps(metafile);
  if (request.metafile) await writeFile(request.metafile, JSON.stringify(metafile));
  return result;
}

/**
 * esbuild names each source relative to the map's own folder, which is wherever this build
 * wrote (a temporary folder, the bundle cache, the chunks/ folder below it): the same code
 * would then map differently, and CDK, which names an asset by the hash of its files, would see
 * a new asset for every place it was built. Instead every source is named from the project root
 * (`functions/core/chats.ts`, `node_modules/zod/…`): the same on every machine and checkout, and
 * what a stack trace should show.
 */
async function projectRelativeMaps(metafile: esbuild.Metafile): Promise<void> {
  for (const output of Object.keys(metafile.outputs)) {
    if (!output.endsWith('.map')) continue;
    const file = join(projectRoot, output);
    const map = JSON.parse(await readFile(file, 'utf8')) as { sources: string[]; sourceRoot?: string };
    map.sources = map.sources.map((source) =>
      relative(projectRoot, join(dirname(file), source))
        .split(sep)
        .join('/'),
    );
    delete map.sourceRoot;
    await writeFile(file, JSON.stringify(map));
  }
}

/**
 * Several bundles in one process (ApiFunction's local bundling builds every function a synth
 * lacks at once: one Node start instead of one per function), a few at a time. Each request's
 * failure is its own: the answer maps each entry that failed to its message.
 */
export async function bundleMany(requests: BundleRequest[], concurrency = 4): Promise<Record<string, string>> {
  const failures: Record<string, string> = {};
  const queue = [...requests];
  const worker = async () => {
    for (let request = queue.shift(); request; request = queue.shift()) {
      try {
        await bundle(request);
      } catch (error) {
        failures[request.entry] = (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, requests.length) }, worker));
  return failures;
}

// `tsx lib/constructs/bundle.ts '<BundleRequest as JSON>'`: one bundle (test/infra/bundle.test.ts).
// `tsx lib/constructs/bundle.ts --batch <file>`: the requests of a JSON file (local-bundle.ts);
// the failures are written to `<file>.failures.json`.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv[2] === '--batch') {
      const file = process.argv[3] ?? '';
      const failures = await bundleMany(JSON.parse(await readFile(file, 'utf8')) as BundleRequest[]);
      await writeFile(`${file}.failures.json`, JSON.stringify(failures));
    } else {
      await bundle(JSON.parse(process.argv[2] ?? '') as BundleRequest);
    }
  } catch (error) {
    // esbuild has printed the errors already (logLevel warning).
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
