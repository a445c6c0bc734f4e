/**
 * Starts and stops second local runtimes (child-server.ts, one child process each) for the
 * scenarios that need settings of their own. The runner stops them all at the end and kills
 * them from its 'exit' hook, so none outlives the bench.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ChildServer {
  url: string;
  /** Closes its stdin, then SIGTERM; SIGKILL after 5 s. */
  stop: () => Promise<void>;
}

const running = new Set<ChildProcess>();

async function stop(proc: ChildProcess): Promise<void> {
  running.delete(proc);
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise<void>((ok) => proc.once('exit', () => ok()));
  proc.stdin?.end();
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts a runtime with the bench's environment plus `env` (an undefined value removes the
 * variable) and resolves with its URL once it listens. `name` is for error messages.
 */
export async function startChildServer(name: string, env: Record<string, string | undefined>): Promise<ChildServer> {
  const script = fileURLToPath(new URL('./child-server.ts', import.meta.url));
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete childEnv[key];
    else childEnv[key] = value;
  }
  // process.execArgv carries tsx's loader flags, so the child runs TypeScript as this process does.
  const proc = spawn(process.execPath, [...process.execArgv, script], {
    env: childEnv,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  running.add(proc);
  try {
    const url = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`${name} did not start within 60 s`)), 60_000);
      const settle = () => clearTimeout(timer);
      createInterface({ input: proc.stdout! }).once('line', (line) => {
        settle();
        try {
          ok(String((JSON.parse(line) as { url: unknown }).url));
        } catch {
          fail(new Error(`${name} wrote "${line}" instead of its URL`));
        }
      });
      proc.once('error', (error) => {
        settle();
        fail(error);
      });
      proc.once('exit', (code, signal) => {
        settle();
        fail(new Error(`${name} exited (${code ?? signal}) before listening`));
      });
    });
    return { url, stop: () => stop(proc) };
  } catch (error) {
    await stop(proc);
    throw error;
  }
}

/** Stops every runtime still running. */
export async function stopChildServers(): Promise<void> {
  await Promise.all([...running].map(stop));
}

/** For a synchronous 'exit' hook: no runtime may outlive the bench. */
export function killChildServers(): void {
  for (const proc of running) proc.kill('SIGKILL');
}
