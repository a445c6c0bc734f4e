/**
 * The dispatch sweeper (contract §4.4, §11): a scheduled run, every minute in AWS (and on an
 * interval in the local runtime), that resumes dispatch work a crash or a failed queue call
 * left behind — batches sealed but never handed to the FIFO queue, inputs whose flush
 * signal was lost, and batch messages a failed visibility change or delete left where the
 * table says they should not be (marked DISPATCH#REPAIR). It reads only the sparse gsi3 entries of chats with
 * such work that has not
 * moved for a while (sweepAfterMs in core/dispatch/sweep.ts), so an idle instance costs one Query per run.
 */
import { repairMessages, sweep } from '../core/dispatch/sweep.js';
import { getConfig } from '../core/instance-config.js';
import { logger } from '../platform/logger.js';
import { dispatchConfigured } from '../platform/queues.js';

export async function handler(): Promise<{ resumed: number; repaired: number }> {
  if (!dispatchConfigured()) return { resumed: 0, repaired: 0 };
  const config = await getConfig();
  const [resumed, repaired] = await Promise.all([sweep(config), repairMessages()]);
  if (resumed > 0) logger.warn('dispatch sweep resumed stranded work', { chats: resumed });
  if (repaired > 0)
    logger.warn('dispatch sweep repaired batch messages after failed queue calls', { batches: repaired });
  return { resumed, repaired };
}
