/**
 * A tail of the event log: the local stand-in for the consumers that AWS feeds from the table's
 * stream (the push notifier, the search index writer). It reads new events in sequence order
 * with the same reads the SSE stream uses and hands them to the consumer, batch by batch.
 *
 * Why not DynamoDB Local's stream: its stream keeps every record of the session, and every
 * write gets slower as they pile up (measured: the local runtime must stay fast after hours of
 * use). A tail costs one Query per poll and nothing grows.
 */
import pLimit from 'p-limit';
import type { StoredEvent } from '../functions/store/events-repo.js';
import { currentSequence, readLog, sequenceHead, voidNumber } from '../functions/store/events-repo.js';
import { asInvocation } from './invocations.js';

/** Poll period: what an event may wait locally before a consumer sees it. */
const POLL_MS = 200;
/**
 * A missing number may be a transaction still in flight; after this it is taken as a hole. The
 * SSE readers' default (core/event-stream.ts): with 3 s, a loaded machine voided numbers of
 * writers still committing, which then gave up with 429. Numbers at or below the counter's
 * `settled` (handed out before this runtime started) are crash holes, voided at once.
 */
const HOLE_GRACE_MS = 10_000;
/** While a tail is off, how often it looks at where it would start. */
const OFF_POLL_MS = 1_000;
/** Events read per poll. */
const PAGE = 100;

export interface TailOptions {
  /** For the error lines. */
  name: string;
  /** The first sequence number to read (called when the tail starts, or restarts after being off). */
  start: () => Promise<number>;
  /** Handles the events read in one poll, in order; the tail moves on when it resolves. */
  consume: (events: StoredEvent[], through: number) => Promise<void>;
  /**
   * While false, the tail reads nothing and only keeps `start()` in view (once a second), so it
   * resumes from about where it was turned back on.
   */
  enabled?: () => Promise<boolean>;
}

/** Voids the numbers from `first` to `last`, in order; false at the first one already used. */
async function voidAll(first: number, last: number): Promise<boolean> {
  for (let seq = first; seq <= last; seq++) if (!(await voidNumber(seq))) return false;
  return true;
}

export function startLogTail(options: TailOptions): { stop(): Promise<void> } {
  let stopped = false;
  let next: number | undefined;
  let waitingSince: number | undefined;
  /** The counter's `settled`, read when a gap is first seen (it changes only at a start). */
  let settled = 0;
  const noticeGap = async () => {
    if (waitingSince !== undefined) return;
    waitingSince = Date.now();
    settled = (await sequenceHead()).settled;
  };
  const due = (last: number) => last <= settled || Date.now() - waitingSince! >= HOLE_GRACE_MS;
  let running: Promise<void> = Promise.resolve();

  let offSince = 0;
  const poll = async () => {
    if (options.enabled && !(await options.enabled())) {
      if (next === undefined || Date.now() - offSince >= OFF_POLL_MS) {
        next = await options.start();
        offSince = Date.now();
      }
      return;
    }
    next ??= await options.start();
    const entries = await readLog(next, PAGE);
    const events: StoredEvent[] = [];
    let through = next - 1;
    for (const entry of entries) {
      if (entry.seq > through + 1) {
        // A gap: wait for it to fill, then void it (as SSE readers do, core/event-stream.ts) and
        // step over it; a number used meanwhile is read on the next poll.
        await noticeGap();
        if (!due(entry.seq - 1) || !(await voidAll(through + 1, entry.seq - 1))) break;
      }
      waitingSince = undefined;
      if (!('void' in entry)) events.push(entry);
      through = entry.seq;
    }
    if (entries.length === 0) {
      // Nothing at `next` or after it in its bucket: a hole at a bucket's end is voided and
      // stepped over once the log has moved past it.
      await noticeGap();
      if (due(next)) {
        if ((await currentSequence()) >= next && (await voidNumber(next))) through = next;
        waitingSince = undefined;
      }
    }
    if (through >= next) {
      await options.consume(events, through);
      next = through + 1;
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    running = asInvocation(poll).catch((error: unknown) => {
      if (!stopped) console.error(`local ${options.name}:`, error);
    });
    await running;
    if (!stopped) timer = setTimeout(() => void loop(), POLL_MS);
  };
  void loop();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export interface EffectTailOptions {
  /** For the error lines. */
  name: string;
  /** While false, nothing is read (the tail keeps the log's head in view and resumes from there). */
  enabled: () => Promise<boolean>;
  /** Whether an event concerns this effect at all (the others are skipped without work). */
  wants: (event: StoredEvent) => boolean;
  /** The effect for one event (core code, as the AWS consumer runs it), in an invocation of its own. */
  handle: (event: StoredEvent) => Promise<unknown>;
  /** Events handled at once: one slow push service, hook or provider does not hold up the next event. */
  inFlight: number;
}

/**
 * A tail for an effect of persisted events (push, webhooks, auto-rename): it starts at the log's
 * head (events written while the runtime was down trigger nothing; in AWS the stream keeps them 24
 * hours) and hands each event it wants to `handle`, a few at a time, without waiting for them.
 */
export function startEffectTail(options: EffectTailOptions): { stop(): Promise<void> } {
  let stopped = false;
  const limit = pLimit(options.inFlight);
  const inFlight = new Set<Promise<unknown>>();
  const tail = startLogTail({
    name: options.name,
    start: async () => (await currentSequence()) + 1,
    enabled: options.enabled,
    consume: async (events) => {
      for (const event of events) {
        if (!options.wants(event)) continue;
        const run = limit(() =>
          asInvocation(() => options.handle(event)).catch((error: unknown) => {
            if (!stopped) console.error(`local ${options.name}:`, error);
          }),
        );
        inFlight.add(run);
        void run.finally(() => inFlight.delete(run));
      }
    },
  });
  return {
    stop: async () => {
      stopped = true;
      await tail.stop();
      await Promise.all(inFlight);
    },
  };
}
