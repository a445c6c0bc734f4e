/**
 * One local runtime per data folder (issue 33 item 8). Two runtimes on one DATA_DIR would run two
 * DynamoDB Locals over the same files (the second's writes fail with InternalFailure, and either
 * may corrupt what the other wrote), so the runtime takes `DATA_DIR/.instance.lock` before it
 * launches anything.
 *
 * The lock is a file created with O_EXCL ('wx') holding the owner's pid. It is removed when the
 * owner exits (any exit of its Node process, a clean stop or a failure). A kill -9 leaves the file
 * behind: the next start finds its pid gone (process.kill(pid, 0) answers ESRCH), or reused by
 * itself, takes the lock as stale, removes it and creates its own, so a restart after a crash
 * needs no manual cleanup. Two starts racing for a stale lock: only one O_EXCL create succeeds.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = '.instance.lock';

export class DataDirLocked extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `another chat relay (pid ${pid}) is running on the data folder ${dataDir}: stop it first, or set ` +
        'DATA_DIR to another folder.',
    );
  }
}

/**
 * Whether a process with this pid is alive (one this user may signal, or any: EPERM means it
 * exists). A zombie is not: killed, it waits to be reaped by its parent (or by a container's init,
 * which may never reap it) and still answers signal 0, so on Linux its state is read too.
 */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ...": the comm may hold spaces and parentheses, the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // No /proc (macOS) or gone meanwhile: signal 0 answered, so take it as alive unless gone.
    return existsSync('/proc') ? false : true;
  }
}

/** The pid a lock file names (NaN when it is empty or being written). */
function ownerOf(path: string): number {
  try {
    return Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
  } catch {
    return Number.NaN;
  }
}

/**
 * Takes the data folder's lock for this process, released when the process exits; throws
 * DataDirLocked when a live process holds it.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw error;
    }
    const pid = ownerOf(path);
    // A lock whose file is still being written by its owner reads empty for an instant.
    if (Number.isNaN(pid) && attempt < 2) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      continue;
    }
    if (alive(pid)) throw new DataDirLocked(dataDir, pid);
    // Stale (its owner was killed): remove it and try again; a racing start may win the create.
    // Read once more first, so a lock another start just took in its place is not the one removed.
    if (ownerOf(path) !== pid) continue;
    try {
      unlinkSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  let held = true;
  const release = () => {
    if (!held) return;
    held = false;
    // Only our own lock: never one a later start took after ours was judged stale.
    if (ownerOf(path) === process.pid) {
      try {
        unlinkSync(path);
      } catch {
        // Gone already.
      }
    }
  };
  process.once('exit', release);
  return { release };
}
