/**
 * The stream check (contract §4.2): one look at a new stream once its timeout has passed. Its
 * record is a delayed `{ messageId }` message (functions/platform/stream-timer.ts) on the
 * dispatch flush queue, which carries the stream checks beside the flush signals so that the
 * stack has one SQS event source mapping, not two (an idle mapping long-polls all month:
 * ~648,000 requests, $0.26). The flush queue's consumer, functions/jobs/flush.ts, hands each
 * check record to `checkStream`, which uses the expiry task's code:
 * - over already (completed, cancelled, or unknown): nothing to do;
 * - idle longer than the timeout: cancelled now (the same conditional write as the loop's);
 * - still active: the stream-timeout state machine takes over, first waiting until the
 *   stream could be overdue.
 * A redelivered or duplicated check is harmless: the cancel is conditional on the stream
 * still streaming, and the execution is named by the message id. A check that throws is
 * reported back by the consumer (ReportBatchItemFailures), so only its record comes back.
 */
import * as Streaming from '../core/streaming.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { startStreamTimeoutLoop } from '../platform/stream-timer.js';
import { loopWaitSeconds } from './expire-stream.js';

export type CheckOutcome = 'over' | 'looping';

/** One stream's check: it ends the stream, finds it over, or hands it to the loop. */
export async function checkStream(config: InstanceConfig, messageId: string): Promise<CheckOutcome> {
  const outcome = await Streaming.expireIfIdle(config, messageId);
  if (outcome.done) return 'over';
  await startStreamTimeoutLoop({ messageId, waitSeconds: loopWaitSeconds(outcome.waitMs), waitMs: outcome.waitMs });
  return 'looping';
}
