/**
 * The sweeper's two duties (contract §4.4, §11; functions/jobs/dispatch-sweep.ts runs them):
 * resume a chat's dispatch work that a crash or a lost signal stranded (`sweep`), and put a
 * batch's queue message where the table says it belongs after a queue call on it failed
 * (`repairMessages`).
 */
import { NO_DEADLINE } from '../../platform/deadline.js';
import type { InstanceConfig } from '../../platform/instance-config.js';
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import * as Batches from '../../store/dispatch/batches.js';
import * as State from '../../store/dispatch/state.js';
import { defaultDeps, dispatchConfig } from './deps.js';
import type { DispatchDeps } from './deps.js';
import { isFinished, leasableAt } from './lease.js';
import { flush, sendInOrder } from './seal.js';

/**
 * Picks up a chat's dispatch work that a crash or a lost signal left behind (the sweeper):
 * sealed batches never handed to the queue, and unsealed inputs nobody signalled. Safe to run
 * at any time: it does what the normal path would have done.
 */
export async function resume(config: InstanceConfig, chatId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const state = await State.getState(chatId);
  await sendInOrder(chatId, state, NO_DEADLINE);
  if (state.pending_inputs) await flush(config, chatId, deps);
  else await State.clearPendingMark(chatId);
}

/** How long dispatch work may sit unmoved before the sweeper takes it as stranded. */
export const sweepAfterMs = (config: InstanceConfig): number =>
  (dispatchConfig(config).mode === 'batched_sequential' ? dispatchConfig(config).maxBatchWaitMs : 0) + 30_000;

/** The sweeper's run: resumes every chat whose dispatch work looks stranded. Returns how many. */
export async function sweep(
  config: InstanceConfig,
  deps: DispatchDeps = defaultDeps,
  staleAfterMs = sweepAfterMs(config),
): Promise<number> {
  const before = new Date(deps.clock().getTime() - staleAfterMs).toISOString();
  const chats = await State.staleDispatchWork(before, 100);
  const results = await Promise.allSettled(chats.map((chatId) => resume(config, chatId, deps)));
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      logger.error('dispatch sweep: chat not resumed', { chatId: chats[i], error: r.reason });
  });
  return chats.length;
}

/**
 * The sweeper's repair of one batch marked after a failed queue call: puts its message where
 * the table says it belongs (hidden until the batch is due, or deleted once it ended). If the
 * receipt is no longer current the message is visible, held by a newer receive, or gone; an
 * unfinished batch then gets a copy (every receive consults the table, so a spare copy is
 * simply dropped when it turns up after the batch ended). A queue error keeps the mark.
 */
export async function repairMessage(batchId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const batch = await Batches.getBatch(batchId);
  if (!batch?.gsi3sk) return;
  const receipt = batch.repair_receipt ?? batch.receipt_handle;
  const finished = isFinished(batch);
  const dueAt = leasableAt(batch);
  let current = receipt !== undefined;
  if (receipt) {
    try {
      if (finished) await Queues.deleteBatchMessage(receipt);
      else await Queues.hideBatch(receipt, Math.max(0, dueAt - deps.clock().getTime()));
    } catch (error) {
      if (!Queues.isStaleReceipt(error)) throw error;
      current = false;
    }
  }
  if (!current && !finished) await Queues.sendBatch(Batches.messageOf(batch), `r${deps.clock().getTime()}`);
  await Batches.clearRepair(batchId, batch.gsi3sk);
}

/** The sweeper's second duty: repairs every batch marked after a failed queue call. Returns how many. */
export async function repairMessages(deps: DispatchDeps = defaultDeps): Promise<number> {
  const ids = await Batches.batchesToRepair(100);
  const results = await Promise.allSettled(ids.map((id) => repairMessage(id, deps)));
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      logger.error('dispatch sweep: batch message not repaired', { batchId: ids[i], error: r.reason });
  });
  return ids.length;
}
