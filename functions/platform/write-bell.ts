/**
 * A wake-up call for readers that poll the table from the same process: every successful write
 * through the DynamoDB client rings it (store/db.ts), and the event stream's wait between polls
 * ends at the ring instead of its timer (core/event-stream.ts), as does an idle local tail's of
 * the event log (local/event-tail.ts: it backs off to seconds, and the bell keeps it prompt).
 *
 * In AWS a writer and an event stream are different function instances, so the bell never rings
 * in a stream's process and the stream keeps its adaptive polling (100 ms while events flow, up
 * to 1 s when quiet): no extra reads, no extra cost. In the local runtime every handler shares one
 * process, so a write reaches open streams after one poll's read instead of up to a second later.
 *
 * Rings are counted, so a reader that was busy reading when a write landed does not miss it: it
 * notes `writeBellCount()` before it reads and passes it to `sleepUntilWrite`, which returns at
 * once if the bell rang since (the read may have run before the write committed).
 */
const waiters = new Set<() => void>();
let rings = 0;

export function ringWriteBell(): void {
  rings += 1;
  for (const wake of [...waiters]) wake();
}

/** How many times the bell has rung in this process. */
export function writeBellCount(): number {
  return rings;
}

/**
 * Waits `ms`, or less if a write in this process rings the bell first, or not at all if it has
 * rung since `seen` (a `writeBellCount()` taken earlier). An abort of `signal` ends the wait too
 * (it resolves): a reader that stops does not keep its timer, and the process, alive.
 */
export function sleepUntilWrite(ms: number, seen?: number, signal?: AbortSignal): Promise<void> {
  if ((seen !== undefined && rings !== seen) || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      waiters.delete(wake);
      signal?.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    waiters.add(wake);
    signal?.addEventListener('abort', wake, { once: true });
  });
}
