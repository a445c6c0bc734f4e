/**
 * The bundle cache (lib/constructs/bundle-cache.ts) and ApiFunction's local bundling through it
 * (lib/constructs/local-bundle.ts): an asset is reused only while every file it was made from is
 * unchanged, and an app's missing assets are built together.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import type { App } from 'aws-cdk-lib';
import { quietApp } from './synth.js';
import { projectRoot } from '../../lib/constructs/function-asset.js';
import { BundleCache } from '../../lib/constructs/bundle-cache.js';
import { LocalBundle, prebuildBundles } from '../../lib/constructs/local-bundle.js';

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'chat-relay-bundle-cache-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('BundleCache', () => {
  let n = 0;
  const fresh = () => {
    const root = join(scratch, `project-${++n}`);
    mkdirSync(join(root, 'src'), { recursive: true });
    writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
    const built = join(root, 'built');
    mkdirSync(join(built, 'chunks'), { recursive: true });
    writeFileSync(join(built, 'index.mjs'), 'export {}\n');
    writeFileSync(join(built, 'chunks', 'c.mjs'), 'export const c = 2;\n');
    const cache = new BundleCache(join(root, 'cache'), root);
    cache.store('k1', built, ['src/a.ts']);
    return { root, cache };
  };

  it('gives back the asset it kept, every file of it', () => {
    const { root, cache } = fresh();
    expect(cache.has('k1')).toBe(true);
    expect(cache.restore('k1', join(root, 'out'))).toBe(true);
    expect(readFileSync(join(root, 'out', 'chunks', 'c.mjs'), 'utf8')).toBe('export const c = 2;\n');
    expect(readFileSync(join(root, 'out', 'index.mjs'), 'utf8')).toBe('export {}\n');
    expect(cache.has('k2')).toBe(false);
  });

  it('refuses it once an input changed its contents, its time or went away', () => {
    const edited = fresh();
    writeFileSync(join(edited.root, 'src', 'a.ts'), 'export const a = 12;\n');
    expect(edited.cache.restore('k1', join(edited.root, 'out'))).toBe(false);

    const touched = fresh();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(touched.root, 'src', 'a.ts'), later, later);
    expect(touched.cache.has('k1')).toBe(false);

    const removed = fresh();
    rmSync(join(removed.root, 'src', 'a.ts'));
    expect(removed.cache.has('k1')).toBe(false);
  });

  it('replaces an older asset of the same key', () => {
    const { root, cache } = fresh();
    const next = join(root, 'next');
    mkdirSync(next);
    writeFileSync(join(next, 'index.mjs'), 'export const v = 2;\n');
    cache.store('k1', next, ['src/a.ts']);
    const out = join(root, 'out2');
    expect(cache.restore('k1', out)).toBe(true);
    expect(readFileSync(join(out, 'index.mjs'), 'utf8')).toBe('export const v = 2;\n');
  });
});

describe('LocalBundle', () => {
  const saved = process.env.RELAY_BUNDLE_CACHE;
  afterEach(() => {
    if (saved === undefined) delete process.env.RELAY_BUNDLE_CACHE;
    else process.env.RELAY_BUNDLE_CACHE = saved;
  });

  it("builds an app's missing assets together, reuses them, and rebuilds the one whose source changed", () => {
    const cacheDir = join(scratch, 'local-bundle-cache');
    process.env.RELAY_BUNDLE_CACHE = cacheDir;
    const sources = join(scratch, 'handlers');
    mkdirSync(sources, { recursive: true });
    const entry = (name: string, value: string) => {
      const file = join(sources, `${name}.ts`);
      writeFileSync(file, `export const handler = async () => ${JSON.stringify(value)};\n`);
      return file;
    };
    const one = entry('one', 'first answer');
    const two = entry('two', 'second answer');
    const stack = new Stack(quietApp(), 'S');
    const bundleOf = (file: string, mark: string) =>
      new LocalBundle(
        stack,
        { entry: file, external: [], afterBundling: (dir) => [`echo ${mark} > ${dir}/mark.txt`] },
        projectRoot,
      );
    const first = bundleOf(one, 'm1');
    const second = bundleOf(two, 'm2');
    const cache = BundleCache.forProject(projectRoot);
    expect([cache.has(first.key), cache.has(second.key)]).toEqual([false, false]);

    const out = (name: string) => join(scratch, 'assets', name);
    expect(first.tryBundle(out('1a'))).toBe(true);
    // The second was built by the first's child process, completed by its own commands.
    expect(cache.has(second.key)).toBe(true);
    expect(second.tryBundle(out('2a'))).toBe(true);
    expect(readFileSync(join(out('2a'), 'mark.txt'), 'utf8').trim()).toBe('m2');
    expect(readFileSync(join(out('2a'), 'index.mjs'), 'utf8')).toContain('second answer');

    // An edit of the second's source: its asset is built again, the first's is kept.
    const keptAt = readFileSync(join(cacheDir, first.key, 'stamp.json'), 'utf8');
    entry('two', 'edited answer');
    utimesSync(two, new Date(Date.now() + 5_000), new Date(Date.now() + 5_000));
    expect(cache.has(second.key)).toBe(false);
    expect(second.tryBundle(out('2b'))).toBe(true);
    expect(readFileSync(join(out('2b'), 'index.mjs'), 'utf8')).toContain('edited answer');
    expect(readFileSync(join(cacheDir, first.key, 'stamp.json'), 'utf8')).toBe(keptAt);
  }, 60_000);

  it('prebuilds, in one batch, every bundle of an app made first with bundling off, which the real app then reuses', () => {
    process.env.RELAY_BUNDLE_CACHE = join(scratch, 'prebuild-cache');
    const sources = join(scratch, 'prebuild');
    mkdirSync(sources, { recursive: true });
    const files = ['p', 'q', 'r'].map((name) => {
      const file = join(sources, `${name}.ts`);
      writeFileSync(file, `export const handler = async () => 'answer ${name}';\n`);
      return file;
    });
    // The same recipes in both apps, as ChatRelayStack makes itself twice.
    const make = (app: App) => {
      const stack = new Stack(app, 'S');
      return files.map(
        (entry) => new LocalBundle(stack, { entry, external: [], afterBundling: () => [] }, projectRoot),
      );
    };
    const cache = BundleCache.forProject(projectRoot);
    let made: LocalBundle[] = [];
    prebuildBundles(projectRoot, () => {
      const app = quietApp({ postCliContext: { 'aws:cdk:bundling-stacks': [] } });
      made = make(app);
      // Nothing is built while the copy is made: its recipes are only registered.
      expect(made.map((bundle) => cache.has(bundle.key))).toEqual([false, false, false]);
      return app;
    });
    expect(made.map((bundle) => cache.has(bundle.key))).toEqual([true, true, true]);
    const real = make(quietApp());
    expect(real.map((bundle) => bundle.key)).toEqual(made.map((bundle) => bundle.key));
    real.forEach((bundle, i) => {
      const out = join(scratch, 'assets', `prebuilt-${i}`);
      expect(bundle.tryBundle(out)).toBe(true);
      expect(readFileSync(join(out, 'index.mjs'), 'utf8')).toContain(`answer ${['p', 'q', 'r'][i]}`);
    });
  }, 60_000);

  it('fails the synth with the esbuild error of the function that does not build', () => {
    process.env.RELAY_BUNDLE_CACHE = join(scratch, 'failing-cache');
    const broken = join(scratch, 'broken.ts');
    writeFileSync(broken, "import { nothing } from './no-such-module.js';\nexport const handler = nothing;\n");
    const bundle = new LocalBundle(
      new Stack(quietApp(), 'S'),
      { entry: broken, external: [], afterBundling: () => [] },
      projectRoot,
    );
    expect(() => bundle.tryBundle(join(scratch, 'assets', 'broken'))).toThrow(/esbuild failed for .*broken\.ts/);
  }, 60_000);
});
