/**
 * The local stand-in for the two stream-timer stages of functions/platform/stream-timer.ts,
 * on in-process timers, calling the very handlers AWS invokes:
 * 1. the delayed stream check: after the same delay as the SQS message's, the check-stream
 *    handler gets a real-shaped SQS event with one record; a record it reports as failed
 *    comes back a little later, as SQS would redeliver it;
 * 2. the state machine: wait, run the expiry task, wait again while the stream is active
 *    (at most one loop per message, as executions are named by the message id).
 */
import { randomUUID } from 'node:crypto';
import type { SQSEvent } from 'aws-lambda';
import { handler as checkStream } from '../functions/jobs/check-stream.js';
import { handler as expireStream } from '../functions/jobs/expire-stream.js';
import { installStreamTimer, streamCheckMessage } from '../functions/platform/stream-timer.js';
import { asInvocation } from './invocations.js';

/** When a check or an expiry run fails: look again this much later (SQS redelivery, Step Functions' retry). */
const RETRY_MS = 1000;

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

const checkEvent = (body: string): SQSEvent => ({
  Records: [
    {
      messageId: randomUUID(),
      receiptHandle: 'local',
      body,
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:stream-checks',
      awsRegion: 'us-east-1',
    },
  ],
});

let current: LocalStreamTimers | undefined;

/** The running local stream timers, if any (tests look at them). */
export const localStreamTimers = (): LocalStreamTimers | undefined => current;

export function startLocalStreamTimers(): LocalStreamTimers {
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

  const check = (body: string, delayMs: number) =>
    after(delayMs, () => {
      asInvocation(() => checkStream(checkEvent(body)))
        .then((out) => {
          if (out.batchItemFailures.length > 0) check(body, RETRY_MS);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          console.error('local stream check failed', body, error);
          check(body, RETRY_MS);
        });
    });

  const loop = (messageId: string, waitMs: number) =>
    after(waitMs, () => {
      asInvocation(() => expireStream({ messageId }))
        .then((out) => {
          if (out.done) looping.delete(messageId);
          else loop(messageId, out.waitMs);
        })
        .catch((error: unknown) => {
          if (stopped) return;
          // As Step Functions would retry a failed task: look again a little later.
          console.error('local stream timer: expiry failed', messageId, error);
          loop(messageId, RETRY_MS);
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
