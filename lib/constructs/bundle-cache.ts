/**
 * Finished function assets, kept between synths (ApiFunction's local bundling).
 *
 * A synth bundles about 70 functions, and `npm test` synthesizes with bundling more than once
 * (bin/test.sh's synth for the rehearsal, the infra tests' bundled synth), as does a developer's
 * `cdk synth` after `npm start` with RELAY_REHEARSE. An asset depends only on its function's
 * inputs, so each finished asset (the esbuild output and what the after-bundling commands add) is
 * kept under a key naming how it is made, with a stamp of every file it was made from: the
 * sources and packages esbuild read (its metafile's inputs), the code that makes assets, and the
 * installed packages' lockfile. An asset is reused only while every stamped file has the size and
 * modification time it had, so an edit to any input builds it again. CDK still hashes the output
 * (AssetHashType.OUTPUT), so a reused asset is named exactly as a fresh one would be.
 *
 * Entries live in node_modules/.cache/chat-relay-bundles/<key>/ (asset/ and stamp.json), one per
 * function and way of making it, replaced in place, so the cache never grows past one asset per
 * function. RELAY_BUNDLE_CACHE=<folder> keeps them elsewhere; RELAY_BUNDLE_CACHE=off keeps
 * nothing between processes.
 */
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** [path relative to the project, size in bytes (-1: missing), modification time in ms]. */
type Stamped = [string, number, number];

interface Stamp {
  files: Stamped[];
}

export class BundleCache {
  constructor(
    readonly dir: string,
    /** The project root the stamped paths are relative to. */
    readonly root: string,
  ) {}

  private static readonly throwaway = new Map<string, BundleCache>();

  /**
   * The project's cache: RELAY_BUNDLE_CACHE names another folder, or `off` gives one for this
   * process only.
   */
  static forProject(root: string): BundleCache {
    const chosen = process.env.RELAY_BUNDLE_CACHE;
    if (chosen !== 'off') {
      return new BundleCache(chosen || join(root, 'node_modules', '.cache', 'chat-relay-bundles'), root);
    }
    let cache = BundleCache.throwaway.get(root);
    if (!cache) {
      cache = new BundleCache(mkdtempSync(join(tmpdir(), 'chat-relay-bundles-')), root);
      BundleCache.throwaway.set(root, cache);
    }
    return cache;
  }

  /** The key of an asset: a hash of everything that says how it is made (entry, options, commands). */
  static key(recipe: unknown): string {
    return createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 32);
  }

  /** The asset of `key` is cached, and every file it was made from is unchanged. */
  has(key: string): boolean {
    let stamp: Stamp;
    try {
      stamp = JSON.parse(readFileSync(join(this.dir, key, 'stamp.json'), 'utf8')) as Stamp;
    } catch {
      return false;
    }
    return stamp.files.every(([path, size, mtime]) => {
      const [, sizeNow, mtimeNow] = this.stampOf(path);
      return sizeNow === size && mtimeNow === mtime;
    });
  }

  /** Copies the asset of `key` into `outputDir` when it `has` it. */
  restore(key: string, outputDir: string): boolean {
    if (!this.has(key)) return false;
    const entry = join(this.dir, key);
    mkdirSync(outputDir, { recursive: true });
    for (const name of readdirSync(join(entry, 'asset'))) {
      cpSync(join(entry, 'asset', name), join(outputDir, name), { recursive: true, preserveTimestamps: true });
    }
    return true;
  }

  /**
   * Keeps `builtDir` (moved, not copied) as the asset of `key`, stamped with `inputs` (paths
   * relative to the project root). Replaces an older entry of the same key; atomic for readers.
   */
  store(key: string, builtDir: string, inputs: Iterable<string>): void {
    mkdirSync(this.dir, { recursive: true });
    const staging = mkdtempSync(join(this.dir, `${key}.tmp-`));
    renameSync(builtDir, join(staging, 'asset'));
    const files = [...new Set(inputs)].sort().map((path) => this.stampOf(path));
    writeFileSync(join(staging, 'stamp.json'), JSON.stringify({ files } satisfies Stamp));
    const entry = join(this.dir, key);
    rmSync(entry, { recursive: true, force: true });
    renameSync(staging, entry);
  }

  /** A file's stamp now. */
  stampOf(path: string): Stamped {
    try {
      const stat = statSync(resolve(this.root, path));
      return [path, stat.size, stat.mtimeMs];
    } catch {
      return [path, -1, 0];
    }
  }

  /** Every file under a folder of the project, relative to the root (for stamps). */
  filesUnder(folder: string): string[] {
    const base = resolve(this.root, folder);
    if (!existsSync(base)) return [];
    return readdirSync(base, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(folder, join(d.parentPath, d.name).slice(base.length + 1)));
  }
}
