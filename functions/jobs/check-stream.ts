/**
 * The stream check (contract §4.2): the consumer of the stream-check queue, whose delayed
 * messages (`{ messageId }`, functions/platform/stream-timer.ts) arrive once a new stream's
 * timeout has passed. Each record looks at its stream once, with the expiry task's code:
 * - over already (completed, cancelled, or unknown): nothing to do;
 * - idle longer than the timeout: cancelled now (the same conditional write as the loop's);
 * - still active: the stream-timeout state machine takes over, first waiting until the
 *   stream could be overdue.
 * A redelivered or duplicated record is harmless: the cancel is conditional on the stream
 * still streaming, and the execution is named by the message id. A record that fails is
 * reported back (ReportBatchItemFailures), so only it comes back.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import * as Streaming from '../core/streaming.js';
import { getConfig } from '../core/live-config.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
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

const messageIdOf = (body: string): string | undefined => {
  try {
    const { messageId } = JSON.parse(body) as { messageId?: unknown };
    return typeof messageId === 'string' ? messageId : undefined;
  } catch {
    return undefined;
  }
};

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const config = await getConfig();
  const failures: SQSBatchResponse['batchItemFailures'] = [];
  await Promise.all(
    event.Records.map(async (record) => {
      const messageId = messageIdOf(record.body);
      if (messageId === undefined) {
        // Not a stream check: retrying it would not make it one.
        logger.warn('stream check: record without a messageId dropped', { sqsMessageId: record.messageId });
        return;
      }
      try {
        const outcome = await checkStream(config, messageId);
        logger.info('stream check', { messageId, outcome });
      } catch (error) {
        logger.error('stream check failed', { messageId, sqsMessageId: record.messageId, error });
        failures.push({ itemIdentifier: record.messageId });
      }
    }),
  );
  return { batchItemFailures: failures };
}
