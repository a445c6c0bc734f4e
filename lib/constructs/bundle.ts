/**
 * How a function's bundle is built: esbuild's JavaScript API (aws-cdk-lib's NodejsFunction runs
 * the esbuild CLI, which takes no plugins), run by ApiFunction's local bundling in a child
 * process (`tsx lib/constructs/bundle.ts '<json>'`) because CDK's local bundling is synchronous
 * and esbuild runs plugins only in its asynchronous build. Offline, no Docker.
 *
 * Output: `<outdir>/index.mjs`, minified ESM for Node 22, with `index.mjs.map` beside it (the
 * functions do not load it at init: no --enable-source-maps; it is there for debugging).
 *
 * What keeps the bundles small and quick to import (each measured by `BENCH_ONLY=bundles npm run
 * bench`, test/bench/bundles.ts):
 * - zodNamespace: our modules write `import { z } from 'zod'`; `z` is zod's whole namespace as
 *   one value, so esbuild keeps every export of zod behind it (every schema kind, JSON Schema
 *   conversion, and the 40-odd locales: ~470 KB of a 920 KB bundle). Read as the equivalent
 *   `import * as z from 'zod'`, each `z.object`/`z.string`… is a static reference that esbuild
 *   follows, and only what a function uses is kept (~100 KB). Same values, same behaviour.
 * - zodEnglishOnly: zod's locales module keeps English only; zod configures English itself on
 *   load (zod/v4/classic/external.js), and no code of ours selects another locale.
 * - lambdaCredentials: the SDK's default credential chain (env, SSO, ini files, processes, web
 *   identity, ECS/EC2 metadata, with the STS/SSO clients they need: ~100 KB) becomes its first
 *   link only, the environment, which is where Lambda puts the function's role credentials
 *   (lambda-credentials.ts).
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
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

/** Our own sources (not node_modules): the files whose `import { z } from 'zod'` is rewritten. */
const OWN_SOURCE = /[\\/](functions|lib)[\\/].*\.ts$/;
const NAMED_Z_IMPORT = /^import \{ z \} from 'zod';$/gm;

export const zodNamespace: esbuild.Plugin = {
  name: 'zod-namespace',
  setup(build) {
    build.onLoad({ filter: OWN_SOURCE }, async ({ path }) => {
      if (/[\\/]node_modules[\\/]/.test(path)) return undefined;
      const source = await readFile(path, 'utf8');
      return { contents: source.replace(NAMED_Z_IMPORT, "import * as z from 'zod';"), loader: 'ts' };
    });
  },
};

export const zodEnglishOnly: esbuild.Plugin = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, ({ path }) => ({
      contents: 'export { default as en } from "./en.js";\n',
      loader: 'js',
      resolveDir: dirname(path),
    }));
  },
};

export const lambdaCredentials: esbuild.Plugin = {
  name: 'lambda-credentials',
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({
      path: join(here, 'lambda-credentials.ts'),
    }));
  },
};

export function bundleOptions(request: BundleRequest): esbuild.BuildOptions {
  return {
    entryPoints: [request.entry],
    outfile: join(request.outdir, 'index.mjs'),
    absWorkingDir: projectRoot,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    keepNames: true,
    sourcemap: true,
    // Paths in the source map relative to the project, not to the temporary output folder.
    sourceRoot: projectRoot,
    banner: { js: REQUIRE_BANNER },
    external: request.external,
    logLevel: 'warning',
    metafile: request.metafile !== undefined,
    plugins: [zodNamespace, zodEnglishOnly, lambdaCredentials],
  };
}

export async function bundle(request: BundleRequest): Promise<esbuild.BuildResult> {
  const result = await esbuild.build(bundleOptions(request));
  if (request.metafile && result.metafile) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(request.metafile, JSON.stringify(result.metafile));
  }
  return result;
}

// `tsx lib/constructs/bundle.ts '<BundleRequest as JSON>'` (ApiFunction's local bundling).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    await bundle(JSON.parse(process.argv[2] ?? '') as BundleRequest);
  } catch (error) {
    // esbuild has printed the errors already (logLevel warning).
    console.error((error as Error).message);
    process.exitCode = 1;
  }
}
