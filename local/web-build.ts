/**
 * `npm start` rebuilds the web app (web/) when its sources changed since the last build, by the
 * rule `cdk synth` uses too (lib/web-build.ts webBuildIsStale): the built folder's index.html is
 * missing, or a file under web/src or web/public, web/index.html or web/vite.config.ts is newer. Then it runs `npm run build:web` (Vite, about 1 s) and says
 * so; when nothing changed the check is a few stat calls. The build runs while DynamoDB Local's
 * JVM boots (local/run.ts), so it adds nothing to the start in the common case.
 *
 * Two starts at once (test files, each starting `npm start`), or a start beside `cdk synth`, would
 * run two builds into the same folder, one emptying it while the other writes: builds take one
 * lock (lib/web-build.ts webBuildLock) and the second one checks again once it holds the lock,
 * finding the first one's build fresh.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCK_POLL_MS, webBuildIsStale, webBuildLock } from '../lib/web-build.js';
import { SIGN_IN_SOURCE_DIR, WEB_BUILD_DIR } from '../lib/web-policy.js';
import type { WebApp } from './web-app.js';

/**
 * The project root: the nearest folder above this module holding a package.json. `npm start`
 * runs this module from a precompiled copy under node_modules/.cache/ (local/main.ts), whose
 * folders hold no package.json, so both copies find the same root.
 */
export function projectRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** Whether `npm run build:web` has to run: no build yet, or a source newer than it (the stack's rule). */
export const webBuildStale = webBuildIsStale;

export type WebBuildOutcome =
  | { outcome: 'fresh' }
  | { outcome: 'built'; ms: number }
  /** The build's own output (Vite names the file and line). */
  | { outcome: 'failed'; output: string };

function runBuild(root: string): Promise<{ ok: boolean; output: string }> {
  return new Promise((ok) => {
    // npm's own script, as a person would run it; through the npm that runs `npm start` if any.
    const npm = process.env.npm_execpath;
    const [command, args] = npm?.endsWith('.js')
      ? [process.execPath, [npm, 'run', '--silent', 'build:web']]
      : ['npm', ['run', '--silent', 'build:web']];
    // Always a production build: Vite takes NODE_ENV from the environment, and a shell's (or a test
    // runner's) NODE_ENV=development|test would otherwise ship React's development build.
    const env = { ...process.env, NODE_ENV: 'production' };
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', (error) => ok({ ok: false, output: `${output}${error.message}` }));
    child.once('close', (code) => ok({ ok: code === 0, output }));
  });
}

async function withBuildLock<T>(root: string, run: () => Promise<T>): Promise<T> {
  const lock = webBuildLock(root);
  while (!lock.take()) await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  try {
    return await run();
  } finally {
    lock.release();
  }
}

/** Runs `npm run build:web` in `root` if the build is stale (see the top of this file). */
export async function buildWebIfStale(root: string): Promise<WebBuildOutcome> {
  if (!webBuildStale(root)) return { outcome: 'fresh' };
  return withBuildLock(root, async () => {
    // Another start may have built it while this one waited for the lock.
    if (!webBuildStale(root)) return { outcome: 'fresh' };
    const began = Date.now();
    const { ok, output } = await runBuild(root);
    if (!ok) return { outcome: 'failed', output: output.trim() };
    return { outcome: 'built', ms: Date.now() - began };
  });
}

/**
 * What `npm start` serves at `/`: the folder `givenDir` names (RELAY_WEB_DIR: another static
 * build, as the stack's `-c webDir`) as it is, with the relay's sign-in page from web/public for
 * the files it lacks, or the project's web/dist, built first if stale.
 * A missing index.html or a failed build is no error: the app's paths answer 503 saying why
 * (the build's own output goes to the console) and the API starts all the same.
 */
export async function prepareWebApp(
  givenDir: string | undefined,
  progress: (line: string) => void,
  root = projectRoot(),
): Promise<WebApp> {
  if (givenDir) {
    const dir = resolve(givenDir);
    const foreign = dir !== resolve(root, WEB_BUILD_DIR);
    return existsSync(join(dir, 'index.html'))
      ? { dir, signInDir: join(root, SIGN_IN_SOURCE_DIR), ...(foreign ? { foreign } : {}) }
      : { dir, unavailable: `No web app to serve: RELAY_WEB_DIR (${dir}) holds no index.html.` };
  }
  const dir = join(root, WEB_BUILD_DIR);
  const build = await buildWebIfStale(root);
  if (build.outcome === 'built') progress(`web app built (its sources changed) in ${build.ms} ms`);
  if (build.outcome !== 'failed') return { dir };
  console.error(`npm start: the web app's build failed (npm run build:web):\n${build.output}`);
  return {
    dir,
    unavailable:
      'The web app could not be built: `npm run build:web` failed (its errors are in the console of npm start). ' +
      'The API at /api/v1 is up. Fix the error and start npm start again.',
  };
}
