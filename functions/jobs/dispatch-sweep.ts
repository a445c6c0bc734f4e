/**
 * The dispatch sweeper (contract §4.4, §11): a scheduled run, every minute in AWS (and on an
 * interval in the local runtime), that resumes dispatch work a crash or a failed queue call
 * left behind — batches sealed but never handed to the FIFO queue, inputs whose flush
 * signal was lost, and batch messages a failed visibility change or delete left where the
 * table says they should not be (marked DISPATCH#REPAIR). It reads only the sparse gsi3 entries of chats with
 * such work that has not
 * moved for a while (sweepAfterMs in core/dispatch/sweep.ts), so an idle instance costs one Query per run.
 *
 * The same run is the safety net of request deadlines (§5.5.6): a pending request whose next timer
 * (a reminder or the expiry) fell due OVERDUE_GRACE_MS ago and more (its timer lost: a send that
 * failed after the commit, a record dead-lettered) is reminded or expired here, one more Query of
 * the sparse gsi3 per run (core/request-expiry.ts fireOverdueTimers).
 */
import { repairMessages, sweep } from '../core/dispatch/sweep.js';
import { getConfig } from '../core/instance-config.js';
import { fireOverdueTimers } from '../core/request-expiry.js';
import { logger } from '../platform/logger.js';
import { dispatchConfigured } from '../platform/queues.js';

/** How late a deadline's timer must be before the sweep takes it over (a timer is at most seconds late). */
export const OVERDUE_GRACE_MS = 30_000;

export async function handler(): Promise<{ resumed: number; repaired: number; expired: number; reminded: number }> {
  const config = await getConfig();
  // Side by side: a backlog of overdue timers (bounded: core/request-expiry.ts) never holds up the
  // dispatch work, nor the other way round.
  const [{ expired, reminded }, resumed, repaired] = await Promise.all([
    fireOverdueTimers(config, OVERDUE_GRACE_MS),
    dispatchConfigured() ? sweep(config) : 0,
    dispatchConfigured() ? repairMessages() : 0,
  ]);
  if (resumed > 0) logger.warn('dispatch sweep resumed stranded work', { chats: resumed });
  if (repaired > 0)
    logger.warn('dispatch sweep repaired batch messages after failed queue calls', { batches: repaired });
  return { resumed, repaired, expired, reminded };
}
