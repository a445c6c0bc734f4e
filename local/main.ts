/**
 * `npm start`: launches the local runtime (local/run.ts) precompiled, in a plain Node process.
 *
 * Measured on this project's 2-core machine: loading the runtime's ~170 modules and their
 * packages through tsx's loader hooks takes about 1 s of CPU; the same modules transpiled
 * once by esbuild and loaded by Node alone take about 0.5 s. So this launcher (the only file
 * tsx loads; it imports nothing but Node's built-ins) transpiles functions/, lib/ and local/ into
 * node_modules/.cache/chat-relay-start/<fingerprint>/ when a source file changed (one esbuild
 * call, ~0.2 s), then runs local/run.js from there with the same environment. The tree keeps
 * the sources' layout, so relative imports, `import.meta.url` and packages resolve as before;
 * other source files the runtime reads beside its modules (local/java/*.java, the rehearsal's
 * worker script local/rehearse/worker.mjs) are copied into it.
 * If the transpile fails, the runtime runs in this process through tsx, as it always could.
 *
 * Ctrl-C reaches both processes (the terminal signals the whole group); a SIGINT or SIGTERM
 * sent to this process alone is passed on, and the runtime stops when this process goes away.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const STARTED_AT = performance.timeOrigin;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['functions', 'lib', 'local'];
const CACHE = join(ROOT, 'node_modules', '.cache', 'chat-relay-start');
/** Bump when the build options below change. */
const BUILD_FORMAT = '3';
/** Compiled trees kept (the newest); an older one may still be in use by a running instance. */
const KEEP = 3;

/** Files read at run time, copied into the tree as they are. */
const isAsset = (name: string) => name.endsWith('.java') || name.endsWith('.mjs');

function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if ((entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) || isAsset(entry.name)) files.push(path);
    }
  };
  for (const dir of SOURCES) walk(join(ROOT, dir));
  return files.sort();
}

/** The compiled runtime's entry, transpiled first if a source changed; undefined if that failed. */
async function compiled(): Promise<string | undefined> {
  const files = sourceFiles();
  const hash = createHash('sha1').update(BUILD_FORMAT);
  for (const file of files) {
    const { mtimeMs, size } = statSync(file);
    hash.update(`${relative(ROOT, file)}\0${mtimeMs}\0${size}\n`);
  }
  const out = join(CACHE, hash.digest('hex').slice(0, 16));
  const entry = join(out, 'local', 'run.js');
  if (existsSync(entry)) return entry;
  const began = Date.now();
  const modules = files.filter((file) => !isAsset(file));
  const building = `${out}.${process.pid}.tmp`;
  try {
    mkdirSync(CACHE, { recursive: true });
    const { build } = await import('esbuild');
    await build({
      entryPoints: modules,
      outdir: building,
      outbase: ROOT,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      sourcemap: 'linked',
      logLevel: 'silent',
    });
    for (const file of files.filter(isAsset)) {
      const copy = join(building, relative(ROOT, file));
      mkdirSync(dirname(copy), { recursive: true });
      copyFileSync(file, copy);
    }
    try {
      renameSync(building, out);
    } catch (error) {
      // Another start made the same tree meanwhile: use theirs.
      if (!existsSync(entry)) throw error;
      rmSync(building, { recursive: true, force: true });
    }
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    console.warn(`npm start: could not precompile (${(error as Error).message}); running through tsx.`);
    return undefined;
  }
  console.log(
    `[${String(Math.round(Date.now() - STARTED_AT)).padStart(5)} ms] compiled ${modules.length} modules in ${Date.now() - began} ms`,
  );
  const trees = readdirSync(CACHE)
    .map((name) => ({ path: join(CACHE, name), time: statSync(join(CACHE, name)).mtimeMs }))
    .sort((a, b) => b.time - a.time);
  for (const old of trees.slice(KEEP)) rmSync(old.path, { recursive: true, force: true });
  return entry;
}

async function launch(): Promise<void> {
  const entry = await compiled();
  if (!entry) {
    await import('./run.js');
    return;
  }
  const child = spawn(process.execPath, ['--enable-source-maps', entry], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, CHAT_RELAY_STARTED_AT: String(STARTED_AT) },
  });
  // The runtime stops Java and the emulators itself; this process waits for it.
  const pass = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on('SIGINT', pass('SIGINT'));
  process.on('SIGTERM', pass('SIGTERM'));
  process.on('SIGHUP', pass('SIGTERM'));
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  child.once('error', (error) => {
    console.error(`npm start failed: ${error.message}`);
    process.exit(1);
  });
}

void launch();
