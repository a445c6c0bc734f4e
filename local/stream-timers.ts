/**
 * The local stand-in for the two stream-timer stages of functions/platform/stream-timer.ts,
 * on in-process timers, calling the very handlers AWS invokes:
 * 1. the delayed stream check: in AWS a delayed message on the dispatch flush queue. After the
 *    same delay as that message's, the flush queue's consumer (functions/jobs/flush.ts, which
 *    runs flush signals and stream checks alike) gets a real-shaped SQS event with one record
 *    of that queue; a record it reports as failed comes back a little later, as SQS would
 *    redeliver it, at most CHECK_MAX_RECEIVES times in all (then the queue dead-letters it);
 * 2. the state machine: wait, run the expiry task, wait again while the stream is active
 *    (at most one loop per message, as executions are named by the message id); a failed run
 *    is retried as the task's retrier does, then the loop ends (the execution fails).
 * Either way, a stream a timer gives up on is still expired by its next read or write.
 *
 * Why timers rather than the local flush queue (local/sqs.ts), whose poller runs the same
 * consumer: the two are separate switches of the local runtime (test files run the stream
 * timers without the dispatch queues, and the dispatch tests without the timers, so that a
 * stream one test leaves open is not cancelled inside another's assertions); and the local
 * queue has no redrive and a 60 s visibility, so a failing check would come back every minute
 * forever, where these give it CHECK_MAX_RECEIVES runs `retryMs` apart. The delay is the same
 * whole seconds either way (the emulator honours DelaySeconds to the millisecond).
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { handler as expireStream } from '../functions/jobs/expire-stream.js';
import { handler as flushQueueConsumer } from '../functions/jobs/flush.js';
import type { ExpireStreamInput, ExpireStreamOutput } from '../functions/jobs/expire-stream.js';
import { CHECK_MAX_RECEIVES, installStreamTimer, streamCheckMessage } from '../functions/platform/stream-timer.js';
import { FLUSH_QUEUE_NAME, asInvocation, sqsRecord } from './invocations.js';

/** Runs of one expiry task before the execution fails: 1 + the States.TaskFailed retrier's 3. */
export const EXPIRY_MAX_RUNS = 4;

export interface LocalStreamTimerOptions {
  /**
   * The handlers run (tests substitute them); by default the ones AWS invokes: for the checks,
   * the flush queue's consumer.
   */
  checkHandler?: (event: SQSEvent) => Promise<SQSBatchResponse>;
  expireHandler?: (input: ExpireStreamInput) => Promise<ExpireStreamOutput>;
  /** Wait before a failed check or expiry runs again (ms). @default 1000 */
  retryMs?: number;
}

export interface LocalStreamTimers {
  /** Timers currently waiting, of both stages (for tests). */
  pending(): number;
  /**
   * The messages whose state machine loop was started (for tests: a stream over by its check
   * starts none). One id per stream that outlived its check, kept for the life of the process.
   */
  looped(): ReadonlySet<string>;
  stop(): void;
}

/** A check's delivery: one record of the flush queue, with its receive count. */
const checkEvent = (body: string, receives: number): SQSEvent => ({
  Records: [sqsRecord({ Body: body }, FLUSH_QUEUE_NAME, receives)],
});

let current: LocalStreamTimers | undefined;

/** The running local stream timers, if any (tests look at them). */
export const localStreamTimers = (): LocalStreamTimers | undefined => current;

export function startLocalStreamTimers(options: LocalStreamTimerOptions = {}): LocalStreamTimers {
  const runCheck = options.checkHandler ?? flushQueueConsumer;
  const runExpiry = options.expireHandler ?? expireStream;
  const retryMs = options.retryMs ?? 1000;
  const timers = new Set<NodeJS.Timeout>();
  const looping = new Set<string>();
  const looped = new Set<string>();
  let stopped = false;

  const after = (ms: number, run: () => void) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) run();
    }, ms);
    timer.unref();
    timers.add(timer);
  };

  const check = (body: string, delayMs: number, receives = 1) => {
    const again = () => {
      if (stopped) return;
      if (receives < CHECK_MAX_RECEIVES) check(body, retryMs, receives + 1);
      else console.error('local stream check: given up (dead-lettered in AWS)', body);
    };
    after(delayMs, () => {
      asInvocation(() => runCheck(checkEvent(body, receives)))
        .then((out) => {
          if (out.batchItemFailures.length > 0) again();
        })
        .catch((error: unknown) => {
          if (!stopped) console.error('local stream check failed', body, error);
          again();
        });
    });
  };

  const loop = (messageId: string, waitMs: number, runs = 1) =>
    after(waitMs, () => {
      asInvocation(() => runExpiry({ messageId }))
        .then((out) => {
          if (out.done) looping.delete(messageId);
          else loop(messageId, out.waitMs);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          console.error('local stream timer: expiry failed', messageId, error);
          // As the state machine's retrier would: a few more runs, then the execution fails.
          if (runs < EXPIRY_MAX_RUNS) loop(messageId, retryMs, runs + 1);
          else looping.delete(messageId);
        });
    });

  installStreamTimer({
    check: async (input) => {
      const message = streamCheckMessage(input);
      check(message.body, message.delaySeconds * 1000);
    },
    loop: async ({ messageId, waitSeconds, waitMs }) => {
      // A second start of a running execution is a no-op in AWS (named by the message id).
      if (stopped || looping.has(messageId)) return;
      looping.add(messageId);
      looped.add(messageId);
      loop(messageId, waitMs ?? waitSeconds * 1000);
    },
  });
  current = {
    pending: () => timers.size,
    looped: () => looped,
    stop: () => {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      installStreamTimer(undefined);
      current = undefined;
    },
  };
  return current;
}
