/**
 * Which static build of a web app the stack serves (lib/constructs/web-hosting.ts), and building
 * ours when it is missing or stale. Dependency-free (fs and child_process only) so that
 * `npm start`'s runtime can reuse ensureWebBuilt as synth does.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WEB_BUILD_DIR } from './web-policy.js';

/**
 * What `npm run build:web` reads: a change to any of them makes the build stale (npm start uses
 * this rule too). The app also bundles one module of functions/: the request pattern rule it
 * shares with the service.
 */
const WEB_SOURCES = [
  'web/src',
  'web/public',
  'web/index.html',
  'web/vite.config.ts',
  'functions/platform/text-pattern.ts',
];

/** A folder that cannot be served: no index.html at its top (bin/app.ts prints the message). */
export class WebDirError extends Error {}

/** The newest modification time under a file or folder (0 when it does not exist). */
function newestChange(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestChange(join(path, name))), stat.mtimeMs);
}

/** Whether the build under `root` is missing or older than one of its sources. */
export function webBuildIsStale(root: string): boolean {
  const index = join(root, WEB_BUILD_DIR, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return WEB_SOURCES.some((source) => newestChange(join(root, source)) > built);
}

/**
 * The path of our built app (`root`/web/dist), running `npm run build:web` in `root` first (and
 * waiting for it) when the build is missing or a web source is newer than it. The build's own
 * output goes to stderr: a CDK app's stdout is not for logs.
 */
export function ensureWebBuilt(root: string): string {
  const dist = resolve(root, WEB_BUILD_DIR);
  if (!webBuildIsStale(root)) return dist;
  const lock = webBuildLock(root);
  while (!lock.take()) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, LOCK_POLL_MS);
  try {
    // An `npm start` may have built it while this waited for the lock.
    if (!webBuildIsStale(root)) return dist;
    // Always a production build: Vite takes NODE_ENV from the environment (a test runner's is "test").
    const env = { ...process.env, NODE_ENV: 'production' };
    const run = spawnSync('npm', ['run', 'build:web'], { cwd: root, env, stdio: ['ignore', 2, 2] });
    if (run.error) throw new Error(`Could not run "npm run build:web" in ${root}: ${run.error.message}`);
    if (run.status !== 0) throw new Error(`"npm run build:web" failed (exit ${run.status ?? run.signal}) in ${root}.`);
  } finally {
    lock.release();
  }
  if (!existsSync(join(dist, 'index.html'))) {
    throw new Error(`"npm run build:web" wrote no ${WEB_BUILD_DIR}/index.html in ${root}.`);
  }
  return dist;
}

/** A lock older than this was left by a build that was killed: taken over. */
const STALE_LOCK_MS = 120_000;
export const LOCK_POLL_MS = 100;

/**
 * The one lock of builds into web/dist, taken by `cdk synth` (above) and by `npm start`
 * (local/web-build.ts): two builds at once would empty the folder under each other (a synth beside
 * test files that each start `npm start`, on a fresh clone). A folder made atomically; `take`
 * answers whether it got it, taking over a lock a killed build left.
 */
export function webBuildLock(root: string): { take(): boolean; release(): void } {
  const cache = join(root, 'node_modules', '.cache');
  const path = join(cache, 'chat-relay-web-build.lock');
  return {
    take() {
      mkdirSync(cache, { recursive: true });
      try {
        mkdirSync(path);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      try {
        if (Date.now() - statSync(path).mtimeMs > STALE_LOCK_MS) rmSync(path, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      return false;
    },
    release: () => rmSync(path, { recursive: true, force: true }),
  };
}

/**
 * The folder the stack deploys: `given` (`-c webDir=PATH`, relative to the working directory) as it
 * is, which must hold an index.html; without it, our own build, made or refreshed first.
 */
export function resolveWebDir(root: string, given: string | undefined): string {
  if (given === undefined) return ensureWebBuilt(root);
  const dir = resolve(given);
  if (!existsSync(join(dir, 'index.html'))) {
    throw new WebDirError(
      `-c webDir=${given}: ${dir} has no index.html. Name the folder of a built static app (its index.html at ` +
        'the top), or leave webDir out to deploy web/dist.',
    );
  }
  return dir;
}
