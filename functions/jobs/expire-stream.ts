/**
 * The stream-timeout task (contract §4.2): invoked by the stream-timeout state machine after
 * each wait (and by the local runtime's in-process loop). It cancels the stream if it has
 * been idle longer than server.streamTimeoutSeconds, with a write conditioned on the activity
 * it saw, and otherwise tells the loop how long to wait before looking again. The loop only
 * runs for a stream still active at its first check (functions/jobs/check-stream.ts).
 */
import * as Streaming from '../core/streaming.js';
import { getConfig } from '../core/instance-config.js';
import { logger } from '../platform/logger.js';

export interface ExpireStreamInput {
  messageId: string;
}

/**
 * The state machine never waits less than this between checks of one stream. An execution
 * holds at most 25,000 history events (about 10 per loop), so short configured timeouts
 * would otherwise end the loop of a long-active stream within the hour; with this floor it
 * lasts about 10 hours of continuous activity. The contract allows cancelling up to 30 s
 * after the timeout (§4.2), so a check at most 15 s late keeps the guarantee.
 */
export const MIN_LOOP_SECONDS = 15;

/** The state machine's next wait for a stream that could be overdue in `waitMs`: whole seconds, at least the floor. */
export const loopWaitSeconds = (waitMs: number): number => Math.max(MIN_LOOP_SECONDS, Math.ceil(waitMs / 1000));

export interface ExpireStreamOutput {
  messageId: string;
  /** True when the stream is over: the state machine stops. */
  done: boolean;
  /** The next wait, in whole seconds (Step Functions' Wait state), at least MIN_LOOP_SECONDS. */
  waitSeconds: number;
  /** The exact wait in milliseconds, for the local loop (no history budget there). */
  waitMs: number;
}

export async function handler(event: ExpireStreamInput): Promise<ExpireStreamOutput> {
  const config = await getConfig();
  const outcome = await Streaming.expireIfIdle(config, event.messageId);
  logger.info('stream expiry check', { messageId: event.messageId, done: outcome.done, waitMs: outcome.waitMs });
  return {
    messageId: event.messageId,
    done: outcome.done,
    waitSeconds: loopWaitSeconds(outcome.waitMs),
    waitMs: Math.max(1, outcome.waitMs),
  };
}
