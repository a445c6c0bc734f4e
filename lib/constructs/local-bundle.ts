/**
 * ApiFunction's local bundling, synchronous as CDK wants it.
 *
 * A function's asset is lib/constructs/bundle.ts's esbuild output plus what its after-bundling
 * shell commands add (the image runtime, the API document). Finished assets are kept between
 * synths (bundle-cache.ts). The first function of an app whose asset is not cached builds, in one
 * child process (esbuild runs plugins only asynchronously), the assets of every function of that
 * app the cache lacks: one Node start for the synth instead of one per function, and esbuild's
 * builds overlapping. Each function then copies its asset from the cache.
 *
 * CDK bundles an asset as its construct is made, so that first function's app holds only the
 * functions made before it: on an empty cache each function built alone, one Node start and one
 * esbuild after another (a cold synth took about 126 s here, one core busy). `prebuildBundles`
 * therefore makes the stack once more first, with bundling off, to learn every function's recipe,
 * and builds all that the cache lacks in one batch (ChatRelayStack does it when it bundles).
 *
 * A LocalBundle's fields are part of the asset's cache key inside CDK (it hashes the bundling
 * options), so two functions never share a bundle; the app a bundle belongs to is kept beside it
 * (`appOf`), not in a field.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ILocalBundling } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { BundleCache } from './bundle-cache.js';
import type { BundleRequest } from './bundle.js';

/** Where `afterBundling` commands write, in the recipe that keys the cache (the real folder varies). */
const OUTPUT_PLACEHOLDER = '<asset>';

/** Files every asset is made with besides esbuild's inputs: the code that makes it, the installed packages. */
const MAKERS = [
  'lib/constructs/bundle.ts',
  'lib/constructs/local-bundle.ts',
  'lib/constructs/api-function.ts',
  'lib/constructs/function-asset.ts',
  'package-lock.json',
  'node_modules/.package-lock.json',
];

const bundlesOfApp = new WeakMap<IConstruct, LocalBundle[]>();
const appOf = new WeakMap<LocalBundle, IConstruct>();
/** Failures of a batch, by cache key, so each function's synth error names its own. */
const failed = new Map<string, string>();

export interface LocalBundleProps {
  /** Absolute path of the handler module. */
  entry: string;
  /** Packages left out of the bundle. */
  external: string[];
  /** Shell commands that complete the asset in `outputDir` (run there, in order). */
  afterBundling: (outputDir: string) => string[];
  /** Folders whose every file the asset also depends on (the API document reads the routes' schemas). */
  dependsOnFolders?: string[];
}

export class LocalBundle implements ILocalBundling {
  readonly entry: string;
  readonly external: string[];

  constructor(
    scope: IConstruct,
    private readonly props: LocalBundleProps,
    private readonly projectRoot: string,
  ) {
    this.entry = props.entry;
    this.external = props.external;
    const app = scope.node.root;
    appOf.set(this, app);
    bundlesOfApp.set(app, [...(bundlesOfApp.get(app) ?? []), this]);
  }

  /** The cache key: the entry, what stays external, and the commands that complete the asset. */
  get key(): string {
    return BundleCache.key({
      entry: relative(this.projectRoot, this.entry).split(sep).join('/'),
      external: this.external,
      after: this.props.afterBundling(OUTPUT_PLACEHOLDER),
    });
  }

  tryBundle(outputDir: string): boolean {
    const cache = BundleCache.forProject(this.projectRoot);
    if (cache.restore(this.key, outputDir)) return true;
    const app = appOf.get(this)!;
    buildMissing(cache, bundlesOfApp.get(app) ?? [this], this.projectRoot);
    if (cache.restore(this.key, outputDir)) return true;
    throw new Error(failed.get(this.key) ?? `Bundling ${this.entry} left no asset in ${cache.dir}`);
  }

  /** Completes a freshly built bundle in `dir`, then keeps it in the cache. */
  complete(cache: BundleCache, dir: string, metafile: string): void {
    const commands = this.props.afterBundling(dir);
    if (commands.length > 0) {
      const after = spawnSync('bash', ['-c', commands.join(' && ')], { cwd: dir, encoding: 'utf8' });
      if (after.status !== 0) {
        throw new Error(`Completing the asset of ${this.entry} failed (${after.status}): ${after.stderr}`);
      }
    }
    const meta = JSON.parse(readFileSync(metafile, 'utf8')) as { inputs: Record<string, unknown> };
    const inputs = [
      ...Object.keys(meta.inputs),
      ...MAKERS,
      ...(this.props.dependsOnFolders ?? []).flatMap((folder) => cache.filesUnder(folder)),
    ];
    cache.store(this.key, dir, inputs);
  }
}

/**
 * Builds, in one batch, every bundle the cache lacks of the app `makeWithoutBundling` returns:
 * a copy of the app about to be made, made with bundling off (`aws:cdk:bundling-stacks` []),
 * whose functions register their recipes as they are made. The real app's functions then find
 * their assets in the cache. Costs one more construction of the stack (about a second).
 */
export function prebuildBundles(projectRoot: string, makeWithoutBundling: () => IConstruct): void {
  const bundles = bundlesOfApp.get(makeWithoutBundling().node.root) ?? [];
  if (bundles.length > 0) buildMissing(BundleCache.forProject(projectRoot), bundles, projectRoot);
}

/** Builds, in one child process, every bundle of `bundles` the cache lacks, and caches each. */
function buildMissing(cache: BundleCache, bundles: LocalBundle[], projectRoot: string): void {
  const missing = new Map<string, LocalBundle>();
  for (const bundle of bundles) {
    const key = bundle.key;
    if (!missing.has(key) && !failed.has(key) && !cache.has(key)) missing.set(key, bundle);
  }
  // Beside the cache (one file system: storing an asset moves it).
  mkdirSync(cache.dir, { recursive: true });
  const scratch = mkdtempSync(join(cache.dir, '.build-'));
  try {
    const requests: BundleRequest[] = [...missing].map(([key, bundle]) => ({
      entry: bundle.entry,
      outdir: join(scratch, key),
      external: bundle.external,
      metafile: join(scratch, `${key}.meta.json`),
    }));
    const file = join(scratch, 'requests.json');
    writeFileSync(file, JSON.stringify(requests));
    const tsx = join(projectRoot, 'node_modules', '.bin', 'tsx');
    const script = join(projectRoot, 'lib', 'constructs', 'bundle.ts');
    const built = spawnSync(tsx, [script, '--batch', file], { cwd: projectRoot, encoding: 'utf8' });
    if (built.stderr) process.stderr.write(built.stderr);
    if (built.status !== 0) throw new Error(`esbuild failed (${built.status ?? built.signal}): ${built.stderr}`);
    const failures = JSON.parse(readFileSync(`${file}.failures.json`, 'utf8')) as Record<string, string>;
    for (const [key, bundle] of missing) {
      const failure = failures[bundle.entry];
      if (failure !== undefined) {
        failed.set(key, `esbuild failed for ${bundle.entry}: ${failure}`);
        continue;
      }
      try {
        bundle.complete(cache, join(scratch, key), join(scratch, `${key}.meta.json`));
      } catch (error) {
        failed.set(key, (error as Error).message);
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
