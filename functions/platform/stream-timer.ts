/**
 * The timers that cancel an abandoned stream (contract §4.2, §13 item 6), in two stages:
 *
 * 1. `startStreamTimer`, when a streaming message is created: one delayed SQS message
 *    (`{ messageId }`, delivered once the timeout has passed, at most 900 s later) on the
 *    dispatch flush queue (FLUSH_QUEUE_URL), which carries these stream checks beside its
 *    flush signals: one event source mapping for both, as an idle one long-polls all month.
 *    Its consumer (functions/jobs/flush.ts) runs `checkStream` (functions/jobs/check-stream.ts)
 *    on each check, which looks at the stream once. Most streams are over by then (a reply
 *    streams for seconds), and an abandoned one is overdue and cancelled right there: neither
 *    ever starts a state machine execution.
 * 2. `startStreamTimeoutLoop`, by that check, for a stream still active at its check: an
 *    execution of the stream-timeout state machine (wait → expiry function → loop while the
 *    stream is active, functions/jobs/expire-stream.ts), named by the message id so a
 *    repeated start is a no-op.
 *
 * Before, every stream started an execution: 4 Standard transitions (and an X-Ray trace) per
 * stream, even one finished in a second; stage 1 costs about 3 SQS requests (send, the
 * poller's receive, its delete).
 *
 * The local runtime installs in-process timers that run the same check and expiry code
 * (local/stream-timers.ts). Correctness never rests on either stage: every read and write of
 * a stream treats an overdue stream as cancelled.
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import { env } from './env.js';
import { logger } from './logger.js';
import { MAX_DELAY_SECONDS, sendToFlushQueue } from './queues.js';
import { CONTROL_PLANE_BUDGET, clientBudget } from './aws-clients.js';

export interface StreamTimerInput {
  messageId: string;
  /** Seconds until the stream can be overdue (stage 1: the configured idle timeout). */
  waitSeconds: number;
  /** Stage 2: the exact wait in milliseconds, for the local loop (no history budget there to floor it). */
  waitMs?: number;
}

export type StreamTimerStarter = (input: StreamTimerInput) => Promise<void>;

/** SQS's longest per-message delay. A longer timeout is finished by the state machine. */
export const MAX_CHECK_DELAY_SECONDS = MAX_DELAY_SECONDS;

/**
 * The check comes this long after the deadline, so that it finds an abandoned stream already
 * overdue (the timeout counts from updated_at, §4.2, and "overdue" is strictly later) even
 * with a little clock skew between the function that wrote updated_at and the one checking;
 * otherwise the check would find it "due in a moment" and start an execution for nothing.
 * The contract allows cancelling up to 30 s after the timeout.
 */
export const CHECK_MARGIN_SECONDS = 1;

/**
 * Receives of one stream check before the flush queue dead-letters it: the queue's
 * maxReceiveCount (FLUSH_MAX_RECEIVES of lib/constructs/dispatch-queues.ts; the stack test
 * asserts they are equal), after which the local stand-in gives up too. A check is idempotent
 * and cheap to redo.
 */
export const CHECK_MAX_RECEIVES = 5;

/** The stream-check message of stage 1 (a record of the flush queue): its body and delay. */
export function streamCheckMessage(input: StreamTimerInput): { body: string; delaySeconds: number } {
  const delaySeconds = Math.min(
    MAX_CHECK_DELAY_SECONDS,
    Math.max(0, Math.ceil(input.waitSeconds)) + CHECK_MARGIN_SECONDS,
  );
  return { body: JSON.stringify({ messageId: input.messageId }), delaySeconds };
}

let installedCheck: StreamTimerStarter | undefined;
let installedLoop: StreamTimerStarter | undefined;
let sfn: SFNClient | undefined;

/**
 * Replaces the AWS starters (the local runtime's in-process timers): `check` stands in for the
 * delayed SQS message, `loop` for the state machine execution. `undefined` restores AWS.
 */
export function installStreamTimer(
  starters: { check: StreamTimerStarter; loop: StreamTimerStarter } | undefined,
): void {
  installedCheck = starters?.check;
  installedLoop = starters?.loop;
}

async function sendCheck(input: StreamTimerInput): Promise<void> {
  if (!env().FLUSH_QUEUE_URL) {
    logger.warn('stream timer not configured: an abandoned stream is cancelled when next read or written', {
      messageId: input.messageId,
    });
    return;
  }
  const message = streamCheckMessage(input);
  await sendToFlushQueue(message.body, message.delaySeconds);
}

async function startExecution(input: StreamTimerInput): Promise<void> {
  const stateMachineArn = env().STREAM_TIMEOUT_STATE_MACHINE_ARN;
  if (!stateMachineArn) throw new Error('STREAM_TIMEOUT_STATE_MACHINE_ARN is not configured');
  // The Step Functions client is imported by the flush consumer's first loop start, not at load:
  // most checks find the stream over and start none.
  const { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } = await import('@aws-sdk/client-sfn');
  // Timeouts and attempts that end inside the function's timeout (aws-clients.ts).
  sfn ??= new SFNClient(clientBudget(CONTROL_PLANE_BUDGET));
  try {
    await sfn.send(new StartExecutionCommand({ stateMachineArn, name: input.messageId, input: JSON.stringify(input) }));
  } catch (error) {
    // Started before (a redelivered check): the running or finished execution is the loop.
    if (!(error instanceof ExecutionAlreadyExists)) throw error;
  }
}

/**
 * Whether a new stream's check may be sent beside the transaction that creates it rather than
 * after it (one round trip less): its delay must outlast any commit, which ends within the
 * create function's timeout (15 s) and so well before a check due 30 s later or more (the
 * default timeout is 60 s). A check that comes for a create that failed finds no stream and
 * does nothing.
 */
export const mayStartBesideCommit = (input: StreamTimerInput): boolean => input.waitSeconds >= 30;

/**
 * Stage 1, for a stream that was just created. A failure is logged, not thrown: the message
 * is committed, and reads and writes still expire it lazily.
 */
export async function startStreamTimer(input: StreamTimerInput): Promise<void> {
  try {
    await (installedCheck ?? sendCheck)(input);
  } catch (error) {
    logger.error('could not start the stream timer', { messageId: input.messageId, error });
  }
}

/**
 * Stage 2, for a stream still active at its check: the state machine loop, first waiting
 * `waitSeconds`. Throws on failure, so the check is retried (its SQS message comes back).
 */
export async function startStreamTimeoutLoop(input: StreamTimerInput): Promise<void> {
  await (installedLoop ?? startExecution)(input);
}
