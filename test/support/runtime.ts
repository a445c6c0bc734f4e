/**
 * `npm start`'s runtime (local/run.ts) as a child process of a test, on a data folder of the
 * test's own, in a process group of its own so a crash can take down all of it: the Node process
 * (with its in-process emulators) first, as a dying function, then its DynamoDB Local JVM.
 * With `entry: 'local/main.ts'` it starts as `npm start` does: through the launcher, which runs
 * the runtime precompiled in a child process (the group then holds both Node processes; `crash`
 * then kills the launcher first, not the runtime).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A fresh folder for a runtime of a test, holding its configuration file: one agent
 * (`assistant`) and one model (`m`), with `config` merged over them. `dir` is the caller's to
 * remove (the runtime's DATA_DIR may be it, or a folder inside it).
 */
export function runtimeFolder(
  prefix: string,
  config: Record<string, unknown> = {},
): { dir: string; configPath: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const configPath = join(dir, 'config.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
      models: [{ id: 'm', name: 'M', description: '' }],
      ...config,
    }),
  );
  return { dir, configPath };
}

export interface Runtime {
  url: string;
  process: ChildProcess;
  /** kill -9 of the runtime, then (storage having kept what it acknowledged) of its group. */
  crash(): Promise<void>;
  /** A clean stop (SIGTERM to the group); SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export async function startRuntime(
  env: Record<string, string>,
  entry: 'local/run.ts' | 'local/main.ts' = 'local/run.ts',
  /**
   * A given port (a restart on the port of a runtime that stopped). By default 0: the runtime
   * binds a free port itself and names it in its "listening" line, which is read below. (A port
   * found free here and handed over stayed unbound for the seconds the runtime takes to start,
   * long enough for another process's connection to take it: an e2e file failed so.)
   */
  port = 0,
): Promise<Runtime> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, PORT: String(port) };
  // jest's flags are not the runtime's.
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: childEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test: the whole group (launcher, runtime, JVM).
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      fail(new Error(`the runtime did not start within 60 s:\n${output}`));
    }, 60_000);
    const onData = (d: Buffer) => {
      output += d.toString();
      const line = /chat relay listening on (\S+)\/api\/v1/.exec(output);
      if (line) {
        clearTimeout(timer);
        ok(line[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      fail(new Error(`the runtime exited during start-up:\n${output}`));
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  return {
    url,
    process: child,
    crash: async () => {
      // The function dies (kill -9 of the Node process: handlers, adapter, in-process emulators);
      // the storage it wrote to does not, as in AWS, where DynamoDB keeps what it acknowledged.
      // DynamoDB Local answers a write a few milliseconds before its file has it (killed within
      // milliseconds of an answer, it lost 1 of ~400–800 acknowledged transactions in 2 of 3
      // tries; 300 ms later, none in 6), so it outlives the runtime by a moment before going too.
      child.kill('SIGKILL');
      await exited;
      await new Promise((resolve) => setTimeout(resolve, 500));
      signalGroup('SIGKILL');
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return signalGroup('SIGKILL');
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      // The JVM, should it have outlived its parent.
      signalGroup('SIGKILL');
    },
  };
}
