/**
 * The stream-timeout task (contract §4.2): invoked by the stream-timeout state machine after
 * each wait (and by the local runtime's in-process timer). It cancels the stream if it has
 * been idle longer than server.streamTimeoutSeconds, with a write conditioned on the activity
 * it saw, and otherwise tells the loop how long to wait before looking again.
 */
import * as Messages from '../core/messages.js';
import { getConfig } from '../platform/config.js';
import { logger } from '../platform/logger.js';

export interface ExpireStreamInput {
  messageId: string;
}

export interface ExpireStreamOutput {
  messageId: string;
  /** True when the stream is over: the state machine stops. */
  done: boolean;
  /** The next wait, in whole seconds (Step Functions' Wait state resolution). */
  waitSeconds: number;
  /** The same, in milliseconds, for the local timer. */
  waitMs: number;
}

export async function handler(event: ExpireStreamInput): Promise<ExpireStreamOutput> {
  const config = await getConfig();
  const outcome = await Messages.expireIfIdle(config, event.messageId);
  logger.info('stream expiry check', { messageId: event.messageId, done: outcome.done, waitMs: outcome.waitMs });
  return {
    messageId: event.messageId,
    done: outcome.done,
    waitSeconds: Math.max(1, Math.ceil(outcome.waitMs / 1000)),
    waitMs: Math.max(1, outcome.waitMs),
  };
}
