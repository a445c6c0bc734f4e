/**
 * A tail of the event log: what feeds the table stream's consumers locally (local/stream-tail.ts
 * hands its events to their handlers as stream records: the search index writer, the events' side
 * effects). It reads new events in sequence order through the log's one reader, the SSE stream's
 * (core/log-reader.ts, with its rule about holes), and hands them over, a poll's page at a time.
 *
 * Why not DynamoDB Local's stream: its stream keeps every record of the session, and every
 * write gets slower as they pile up (measured: the local runtime must stay fast after hours of
 * use). A tail costs one Query per poll and nothing grows.
 *
 * When it polls: every tail runs in every local runtime (each integration test file's and each
 * browser test's), all on one DynamoDB Local, so a tail that polled at its flowing pace forever
 * spent that JVM's CPU for nothing. It polls every POLL_MS while events flow, then doubles its
 * wait up to IDLE_POLL_MS; a write made in this process (the write bell, platform/write-bell.ts:
 * locally every event is one) ends the wait, so an idle tail still reads an event at once. Only a
 * write from another process (not a supported setup: local/data-lock.ts) waits out the timer. A
 * gap's grace still ends on time: the wait never runs past it.
 */
import type { LoggedEvent } from '../functions/store/events-repo.js';
import { LogReader } from '../functions/core/log-reader.js';
import { sleepUntilWrite, writeBellCount } from '../functions/platform/write-bell.js';
import { asInvocation } from './invocations.js';

/**
 * Poll period while events flow, and the pace of reads however often the bell rings (after a
 * burst of BURST): a stream of writes costs no more reads than polling at this pace did.
 */
const POLL_MS = 200;
/**
 * Reads a tail may make in a row before POLL_MS paces them (a bucket of credit, one read's worth
 * refilled every POLL_MS). A request's writes each ring the bell, and its event is usually the
 * last: locally a POST rings three times in 20 to 100 ms (the write rate limit's lease, the
 * event's number, the commit). Reading at each ring finds the event right after its commit; a
 * bell ringing all the time costs one read per POLL_MS, as polling at that pace did.
 */
const BURST = 3;
/**
 * The longest wait of an idle tail (it doubles from POLL_MS after each poll that found nothing).
 * Measured over a minute of an idle `npm start` (4 tails, 2 of them off), on a quiet machine:
 * 8.4 requests a second and 2.7 s of DynamoDB Local's CPU when they all polled every 200 ms, 0.6
 * and 0.7 s with this (a JVM that gets no request at all spends about 0.3 s).
 */
const IDLE_POLL_MS = 4_000;
/**
 * A missing number may be a transaction still in flight; after this it is taken as a hole. The
 * SSE readers' default (core/event-stream.ts): with 3 s, a loaded machine voided numbers of
 * writers still committing, which then gave up with 429. Numbers at or below the counter's
 * `settled` (handed out before this runtime started) are crash holes, voided at once.
 */
const HOLE_GRACE_MS = 10_000;
/** While a tail is off, how often at most it looks at where it would start (after writes). */
const OFF_POLL_MS = 1_000;
/** Events read per poll. */
const PAGE = 100;

export interface TailOptions {
  /** For the error lines. */
  name: string;
  /** The first sequence number to read (called when the tail starts, or restarts after being off). */
  start: () => Promise<number>;
  /** Handles the events read in one poll, in order; the tail moves on when it resolves. */
  consume: (events: LoggedEvent[], through: number) => Promise<void>;
  /**
   * While false, the tail reads nothing and only keeps `start()` in view (within a second of a
   * write in this process, at most once a second), so it resumes from about where it was turned
   * back on.
   */
  enabled?: () => Promise<boolean>;
  /** Tests only: other timings than the constants above. */
  timing?: Partial<TailTiming>;
}

export interface TailTiming {
  pollMs: number;
  idlePollMs: number;
  holeGraceMs: number;
}

export function startLogTail(options: TailOptions): { stop(): Promise<void> } {
  const { pollMs, idlePollMs, holeGraceMs } = {
    pollMs: POLL_MS,
    idlePollMs: IDLE_POLL_MS,
    holeGraceMs: HOLE_GRACE_MS,
    ...options.timing,
  };
  /** Where the tail reads next (while off: where it would start). */
  let next: number | undefined;
  /** The log's reader while on (core/log-reader.ts: the SSE stream's, with its rule about holes). */
  let reader: LogReader | undefined;

  let offSince = 0;
  /** The bell's count when an off tail last looked at `start()`. */
  let offRung = 0;
  /** Set while off when `start()` was not looked at (looked at too recently): when to look again. */
  let offLookAt: number | undefined;
  /** Reads the log once; true if the tail moved on (events handed over or holes stepped over). */
  const poll = async (): Promise<boolean> => {
    offLookAt = undefined;
    if (options.enabled && !(await options.enabled())) {
      // Off, a tail forgets the gap it was waiting on (`next` follows `start()`): a gap met once it
      // is back on gets its full grace (a stale wait would void a number still being written at
      // once), and a stale wait's end does not keep waking it.
      reader = undefined;
      // Only a write moves the log's head, and locally every write rings the bell: with no ring
      // since the last look there is nothing new to see (an idle off tail reads only its switch).
      if (next !== undefined && writeBellCount() === offRung) return false;
      if (next === undefined || Date.now() - offSince >= OFF_POLL_MS) {
        offRung = writeBellCount();
        next = await options.start();
        offSince = Date.now();
      } else {
        // Woken by a write too soon after the last look: look again when it is due, so the head
        // is in view within OFF_POLL_MS of a write, as when the tail polled on a timer.
        offLookAt = offSince + OFF_POLL_MS;
      }
      return false;
    }
    reader ??= new LogReader({ afterSeq: (next ?? (await options.start())) - 1, holeGraceMs });
    const from = reader.nextSeq;
    const page = await reader.read(PAGE);
    if (page.through < from) return false;
    try {
      await options.consume(page.events, page.through);
    } catch (error) {
      // Read again next time (the search index's segment was not written, say).
      reader.rewind(from);
      throw error;
    }
    next = reader.nextSeq;
    return true;
  };

  const stopping = new AbortController();
  let credit = BURST;
  let creditAt = Date.now();
  const refill = () => {
    credit = Math.min(BURST, credit + (Date.now() - creditAt) / pollMs);
    creditAt = Date.now();
  };
  const run = async () => {
    let idleMs = pollMs;
    while (!stopping.signal.aborted) {
      refill();
      if (credit < 1) await abortableSleep((1 - credit) * pollMs, stopping.signal);
      if (stopping.signal.aborted) return;
      refill();
      credit -= 1;
      // Taken before the reads: a write that lands while they run still ends the wait below.
      const rung = writeBellCount();
      const began = Date.now();
      const moved = await asInvocation(poll).catch((error: unknown) => {
        if (!stopping.signal.aborted) console.error(`local ${options.name}:`, error);
        return 'failed' as const;
      });
      // A failed read (a loaded DynamoDB Local timing out) is tried again at the flowing pace: what
      // it would have read may be an event someone waits for.
      idleMs = moved !== false ? pollMs : Math.min(idlePollMs, idleMs * 2);
      let wakeAt = began + idleMs;
      // A gap's grace ends on time (a hole is voided when it would have been at the flowing pace),
      // and an off tail looks at `start()` when due.
      const gapDue = reader?.gapDueAt;
      if (gapDue !== undefined) wakeAt = Math.min(wakeAt, gapDue);
      if (offLookAt !== undefined) wakeAt = Math.min(wakeAt, offLookAt);
      await sleepUntilWrite(Math.max(0, wakeAt - Date.now()), rung, stopping.signal);
    }
  };
  const running = run();
  return {
    stop: async () => {
      stopping.abort();
      await running;
    },
  };
}

/** Waits `ms`, or until `signal` aborts (it resolves either way). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
