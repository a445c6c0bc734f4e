/**
 * Leasing one received batch (contract §4.4.4): the queue's message is a hint, the batch header
 * decides. A batch is leased when it is due and its chat's previous batch settled; one due soon is
 * waited for, one due later hidden, a finished one's message dropped, one received ahead of its
 * unsettled predecessor queued again behind it (`restoreOrder`). Also the give-back of a leased
 * batch a claim must not return (`release`).
 */
import type { InstanceConfig } from '../../platform/instance-config.js';
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import { retry } from '../../platform/retry.js';
import type { RetryPolicy } from '../../platform/retry.js';
import * as Batches from '../../store/dispatch/batches.js';
import type { BatchRecord } from '../../store/dispatch/batches.js';
import * as Leases from '../../store/dispatch/leases.js';
import * as State from '../../store/dispatch/state.js';
import { dispatchConfig } from './deps.js';
import type { DispatchDeps } from './deps.js';
import { presentEarly } from './present.js';
import { settleMessage } from './queue-message.js';

/** When a batch may be leased: a pending one when due, a leased one when its lease runs out; never once ended. */
export const isFinished = (batch: BatchRecord) => batch.status === 'completed' || batch.status === 'failed';

export function leasableAt(batch: BatchRecord): number {
  if (batch.status === 'pending') return batch.available_at;
  if (batch.status === 'leased') return batch.lease_expires_at ?? 0;
  return Number.POSITIVE_INFINITY;
}

/** A look at a received batch that must be read again (see LOOKS). */
const LOOK_AGAIN = Symbol('look again');
type Look = BatchRecord | undefined | typeof LOOK_AGAIN;

/**
 * Looks at a received batch: three in all, one after another. A look ends in a lease, in the
 * message's drop, hiding or give-back, or in another look when the batch changed between its read
 * and its conditional write (a heartbeat, a retry delay, a completion), or a wait for it to fall
 * due ended. Three, as a busy batch is better given back than held for a lease.
 */
const LOOKS: RetryPolicy<Look> = { attempts: 3, backoff: () => 0, retryResult: (look) => look === LOOK_AGAIN };

/** The predecessor of a received batch as the claim is reading it (named by the message), and the batches received with it. */
export interface PredecessorLook {
  look: Promise<BatchRecord | undefined> | undefined;
  receivedWith: ReadonlySet<string>;
}

/**
 * Leases a received batch if the table says it may be claimed now: pending and due, or leased
 * with a lease that ran out (§4.4.4). A batch due within a second (its message reappears up
 * to a second early) is waited for, if the claim's own wait allows (`deadline`; 0 when it
 * already holds a batch, whose lease is running); one due later is hidden
 * until then (its chat's later batches wait behind it); a finished one's message is dropped.
 */
export async function tryLease(
  config: InstanceConfig,
  r: Queues.ReceivedBatch,
  workerId: string,
  leaseMs: number,
  deadline: number,
  deps: DispatchDeps,
  /** The batch as just read, if the caller read it (saves the first read). */
  firstLook?: BatchRecord,
  predecessor?: PredecessorLook,
): Promise<BatchRecord | undefined> {
  let predecessorSettled = false;
  const look = async (n: number): Promise<Look> => {
    const batch = n === 1 && firstLook ? firstLook : await Batches.getBatch(r.batchId);
    const now = deps.clock().getTime();
    if (!batch || isFinished(batch)) {
      await settleMessage('drop a finished batch', r.batchId, r.receiptHandle, () =>
        Queues.deleteBatchMessage(r.receiptHandle),
      );
      return undefined;
    }
    const dueAt = leasableAt(batch);
    if (dueAt > now) return notDueYet(r, batch, dueAt, now, deadline, deps);
    // A first lease waits for the chat's previous batch to settle (an expired lease's batch
    // passed this check when it was leased). Normally the queue saw to it: the previous batch's
    // message went first and was deleted when it ended.
    if (batch.status === 'pending' && batch.prev_batch_id && !predecessorSettled) {
      if (await waitsForPredecessor(r, batch, batch.prev_batch_id, n === 1, predecessor, deps)) return undefined;
      predecessorSettled = true;
    }
    return leaseNow(config, r, batch, workerId, leaseMs, now);
  };
  const outcome = await retry({ ...LOOKS, sleep: deps.sleep }, look);
  if (outcome !== LOOK_AGAIN) return outcome;
  // It kept changing under us: give the message back now rather than hold it for a lease.
  await settleMessage('give back (busy)', r.batchId, r.receiptHandle, () => Queues.hideBatch(r.receiptHandle, 0));
  return undefined;
}

/** A batch not due yet: waited for when due within a second and the claim may wait that long, else hidden until due. */
async function notDueYet(
  r: Queues.ReceivedBatch,
  batch: BatchRecord,
  dueAt: number,
  now: number,
  deadline: number,
  deps: DispatchDeps,
): Promise<Look> {
  const wait = dueAt - now;
  if (wait < 1000 && now + wait <= deadline) {
    await deps.sleep(wait);
    return LOOK_AGAIN;
  }
  // Our receive is now the message's newest: the lease holder's heartbeat and complete
  // must use it. If the lease moved meanwhile (a heartbeat, an end), look again.
  if (
    batch.status === 'leased' &&
    batch.lease_owner &&
    !(await Leases.noteReceipt(batch.id, batch.lease_owner, dueAt, r.receiptHandle))
  )
    return LOOK_AGAIN;
  await settleMessage('hide until due', r.batchId, r.receiptHandle, () => Queues.hideBatch(r.receiptHandle, wait));
  return undefined;
}

/**
 * Whether a pending batch must wait for its unsettled predecessor `prevId`; if so its message is
 * given back (received together with the predecessor's, it follows it) or queued again behind it.
 */
async function waitsForPredecessor(
  r: Queues.ReceivedBatch,
  batch: BatchRecord,
  prevId: string,
  firstLook: boolean,
  predecessor: PredecessorLook | undefined,
  deps: DispatchDeps,
): Promise<boolean> {
  const prev =
    firstLook && predecessor?.look && r.prev === prevId ? await predecessor.look : await Batches.getBatch(prevId);
  if (!prev || isFinished(prev)) return false;
  // Received together (AWS returns a group's messages in order): give this one back, it follows.
  if (predecessor?.receivedWith.has(prevId)) {
    await settleMessage('give back (after its predecessor)', r.batchId, r.receiptHandle, () =>
      Queues.hideBatch(r.receiptHandle, 0),
    );
  } else {
    await restoreOrder(prev, batch, r.receiptHandle, deps);
  }
  return true;
}

/** The lease's conditional write; if the batch changed since it was read, another look. */
async function leaseNow(
  config: InstanceConfig,
  r: Queues.ReceivedBatch,
  batch: BatchRecord,
  workerId: string,
  leaseMs: number,
  now: number,
): Promise<Look> {
  const outcome = await Leases.leaseBatch(r.batchId, {
    from: batch.status === 'leased' ? 'expired' : 'pending',
    workerId,
    now,
    leaseMs,
    receiptHandle: r.receiptHandle,
  });
  if (!outcome.ok) return LOOK_AGAIN;
  // Its presentation (chat and payload reads) side by side with the dispatch state's note.
  presentEarly(outcome.batch);
  if (dispatchConfig(config).mode === 'batched_sequential') await State.noteLeased(batch.chat_id, batch.id);
  return outcome.batch;
}

/**
 * A batch received while the chat's previous batch is unsettled: in its FIFO group, whatever was
 * queued before it is gone, so the previous batch's message was lost (its retention ran out, or
 * it was dead-lettered after many receives), or only a copy of it is left, queued behind this
 * one (a repair's). A copy cannot jump the queue, so this one goes behind it: a copy of the
 * previous batch, then a copy of this one, then this message is deleted. A crash in between
 * leaves spare copies, dropped when they turn up after their batch ended; a batch further back
 * that is unsettled too is restored the same way when its successor's copy comes up.
 */
async function restoreOrder(
  prev: BatchRecord,
  batch: BatchRecord,
  receiptHandle: string,
  deps: DispatchDeps,
): Promise<void> {
  logger.warn('dispatch: a batch came before its unsettled predecessor; both queued again, in order', {
    batchId: batch.id,
    prevBatchId: prev.id,
    chatId: batch.chat_id,
  });
  const copy = `o${deps.newId()}`;
  await Queues.sendBatch(Batches.messageOf(prev), copy);
  await Queues.sendBatch(Batches.messageOf(batch), copy);
  await settleMessage('drop a message queued again', batch.id, receiptHandle, () =>
    Queues.deleteBatchMessage(receiptHandle),
  );
}

/** Gives back a batch this claim leased but must not return (its chat already has one in it). */
export async function release(batch: BatchRecord, workerId: string): Promise<void> {
  const outcome = await Leases.returnBatch(batch.id, workerId, Date.now());
  const receipt = outcome.ok ? outcome.batch.receipt_handle : undefined;
  if (receipt) await settleMessage('give back', batch.id, receipt, () => Queues.hideBatch(receipt, 0));
}
