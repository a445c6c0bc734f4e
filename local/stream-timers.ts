/**
 * The local stand-in for the stream-timeout state machine: the same loop (wait, run the
 * expiry task, wait again while the stream is active) on in-process timers, calling the very
 * handler the state machine invokes in AWS.
 */
import { handler as expireStream } from '../functions/jobs/expire-stream.js';
import { asInvocation } from './invocations.js';
import { installStreamTimer } from '../functions/platform/stream-timer.js';

export interface LocalStreamTimers {
  /** Timers currently waiting (for tests). */
  pending(): number;
  stop(): void;
}

export function startLocalStreamTimers(): LocalStreamTimers {
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const schedule = (messageId: string, waitMs: number) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      asInvocation(() => expireStream({ messageId }))
        .then((out) => {
          if (!out.done) schedule(messageId, out.waitMs);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          // As Step Functions would retry a failed task: look again a little later.
          console.error('local stream timer: expiry failed', messageId, error);
          schedule(messageId, 1000);
        });
    }, waitMs);
    timer.unref();
    timers.add(timer);
  };

  installStreamTimer(async ({ messageId, waitSeconds }) => schedule(messageId, waitSeconds * 1000));
  return {
    pending: () => timers.size,
    stop: () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      installStreamTimer(undefined);
    },
  };
}
