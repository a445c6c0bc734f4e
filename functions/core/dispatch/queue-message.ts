/**
 * Queue calls on a batch's message made after the table decided (hide, give back, delete), and
 * what their failure means: never the request's failure; a repair mark for the sweeper instead.
 */
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import * as Batches from '../../store/dispatch/batches.js';

/**
 * A queue call on a batch's message after the table decided what should happen to it. Its
 * failure never fails the request. A stale receipt (the message was received again since, or
 * is visible) needs nothing: whoever receives it next consults the table. Any other failure
 * marks the batch, and the sweeper puts the message where the table says it belongs.
 */
export async function settleMessage(
  what: string,
  batchId: string,
  receiptHandle: string,
  call: () => Promise<void>,
): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (Queues.isStaleReceipt(error)) {
      logger.info(`dispatch: ${what}: receipt no longer current`, { batchId });
      return;
    }
    logger.warn(`dispatch: ${what} failed on the queue; marked for the sweeper`, { batchId, error });
    await Batches.markRepair(batchId, receiptHandle, new Date().toISOString()).catch((markError: unknown) =>
      logger.error('dispatch: repair mark not written', { batchId, error: markError }),
    );
  }
}
