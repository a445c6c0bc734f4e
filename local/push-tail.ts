/**
 * The local stand-in for the push notifier's stream consumer (functions/jobs/push-notify.ts):
 * it tails the event log itself, reading new events in sequence order with the same reads the
 * SSE stream uses, and hands each to the same core code (core/push.ts).
 *
 * Why not DynamoDB Local's stream: its stream keeps every record of the session, and every
 * write gets slower as they pile up (measured: the local runtime must stay fast after hours of
 * use). A tail costs one Query per poll while push is enabled, one GetItem a second while it is
 * off, and nothing grows. Starts at the log's head: events written while the runtime was down notify
 * no one (in AWS the stream keeps them 24 hours).
 */
import pLimit from 'p-limit';
import * as Push from '../functions/core/push.js';
import { getConfig } from '../functions/platform/config.js';
import { currentSequence, readLog } from '../functions/store/events-repo.js';
import { asInvocation } from './invocations.js';

/** Poll period: what a notification may wait locally before it is noticed. */
const POLL_MS = 200;
/** A missing number may be a transaction still in flight; after this it is taken as a hole. */
const HOLE_GRACE_MS = 3_000;
/** While push is off, how often the log's head is looked at. */
const OFF_POLL_MS = 1_000;
/** Notifications delivering at once (one slow push service does not hold up the next event). */
const IN_FLIGHT = 8;

export function startLocalPushTail(): { stop(): Promise<void> } {
  let stopped = false;
  let next: number | undefined;
  let waitingSince: number | undefined;
  const limit = pLimit(IN_FLIGHT);
  const inFlight = new Set<Promise<unknown>>();

  const handOver = (event: Parameters<typeof Push.notifyEvent>[0]) => {
    const run = limit(() =>
      asInvocation(async () => Push.notifyEvent(event, await getConfig())).catch((error: unknown) => {
        if (!stopped) console.error('local push notifier:', error);
      }),
    );
    inFlight.add(run);
    void run.finally(() => inFlight.delete(run));
  };

  let offSince = 0;
  const poll = async () => {
    if (!(await getConfig()).push.enabled) {
      // Off: keep only the log's head in view (one GetItem a second), so turning push on
      // resumes from where it was turned on; the notifier checks the setting again per event.
      if (next === undefined || Date.now() - offSince >= OFF_POLL_MS) {
        next = (await currentSequence()) + 1;
        offSince = Date.now();
      }
      return;
    }
    next ??= (await currentSequence()) + 1;
    const entries = await readLog(next, 100);
    for (const entry of entries) {
      if (entry.seq > next) {
        // A gap: wait for it to fill, then step over it.
        waitingSince ??= Date.now();
        if (Date.now() - waitingSince < HOLE_GRACE_MS) return;
        next = entry.seq;
      }
      waitingSince = undefined;
      if (!('void' in entry)) handOver(entry);
      next = entry.seq + 1;
    }
    if (entries.length === 0) {
      // Nothing at `next` or after it in its bucket: a hole at a bucket's end is stepped over
      // once the log has moved past it.
      waitingSince ??= Date.now();
      if (Date.now() - waitingSince < HOLE_GRACE_MS) return;
      if ((await currentSequence()) >= next) next += 1;
      // Idle: look at the head again only after another grace period.
      waitingSince = undefined;
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    try {
      await asInvocation(poll);
    } catch (error) {
      if (!stopped) console.error('local push tail:', error);
    }
    if (!stopped) timer = setTimeout(() => void loop(), POLL_MS);
  };
  void loop();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(inFlight);
    },
  };
}
