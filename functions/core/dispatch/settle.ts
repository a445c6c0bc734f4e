/**
 * The lease holder's calls (contract §4.4.4 to §4.4.6, §5.11.3-5): heartbeat (extend the lease),
 * complete, and fail: retried later (`retryDelay`) or failed for good with a system message.
 * The batch header's conditional write decides; the queue message follows.
 */
import { ConflictError, FieldRuleError, NotFoundError } from '../../errors.js';
import type { Deadline } from '../../platform/deadline.js';
import { isId } from '../../platform/ids.js';
import type { InstanceConfig } from '../../platform/instance-config.js';
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import * as Chats from '../../store/chats-repo.js';
import { guarded } from '../../store/db.js';
import * as Batches from '../../store/dispatch/batches.js';
import type { BatchRecord } from '../../store/dispatch/batches.js';
import * as Leases from '../../store/dispatch/leases.js';
import { withEvents } from '../../store/events-repo.js';
import { commitTouchingChat, systemMessage } from '../chat-activity.js';
import { defaultDeps, dispatchConfig } from './deps.js';
import type { DispatchDeps } from './deps.js';
import { hideable } from './limits.js';
import { settleMessage } from './queue-message.js';

const batchNotFound = () => new NotFoundError('Dispatch batch not found.');
const leaseLost = (batchId: string, workerId: string) =>
  new ConflictError('Dispatch lease is no longer owned by this worker.', { batchId, workerId });

async function leaseFailure(batchId: string, workerId: string, old: BatchRecord | undefined): Promise<Error> {
  if (old) return leaseLost(batchId, workerId);
  return (await Batches.getBatch(batchId)) ? leaseLost(batchId, workerId) : batchNotFound();
}

function checkBatchId(batchId: string): void {
  if (!isId(batchId)) throw batchNotFound();
}

/** POST /dispatch/{batchId}/heartbeat (§4.4.4). */
export async function heartbeat(
  config: InstanceConfig,
  batchId: string,
  workerId: string,
  extendMs: number | undefined,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const now = deps.clock().getTime();
  const extend = hideable(Math.max(1000, extendMs ?? dispatchConfig(config).leaseMs));
  const outcome = await Leases.extendLease(batchId, workerId, now, extend);
  if (!outcome.ok) throw await leaseFailure(batchId, workerId, outcome.batch);
  const receipt = outcome.batch.receipt_handle;
  if (receipt) await settleMessage('extend the lease', batchId, receipt, () => Queues.hideBatch(receipt, extend));
}

/** POST /dispatch/{batchId}/complete (§4.4.4): no event, no message. */
export async function complete(
  config: InstanceConfig,
  batchId: string,
  workerId: string,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const now = deps.clock();
  const outcome = await Leases.completeBatch(batchId, workerId, now);
  if (!outcome.ok) throw await leaseFailure(batchId, workerId, outcome.batch);
  await afterEnd(config, batchId, outcome.batch.chat_id, outcome.batch.receipt_handle);
}

export interface FailRequest {
  workerId: string;
  reason: string;
  retryable: boolean;
  retryDelayMs?: number | undefined;
}

/**
 * The delay before a retried batch is due again (§4.4.5): the worker's `retryDelayMs` when it
 * gave one (0 included), else retryBaseMs doubled per attempt already counted, capped at retryMaxMs.
 */
export function retryDelay(
  d: Pick<InstanceConfig['server']['dispatch'], 'retryBaseMs' | 'retryMaxMs'>,
  attemptCount: number,
  override?: number,
): number {
  return hideable(override ?? Math.min(d.retryMaxMs, d.retryBaseMs * 2 ** (attemptCount - 1)));
}

/** POST /dispatch/{batchId}/fail (§4.4.5, §4.4.6). */
export async function fail(
  config: InstanceConfig,
  batchId: string,
  req: FailRequest,
  deadline: Deadline,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const d = dispatchConfig(config);
  const reason = req.reason.trim();
  if (reason === '') throw new FieldRuleError('reason', 'reason is required.');
  const current = await Batches.getBatch(batchId);
  if (!current) throw batchNotFound();
  const now = deps.clock();
  const nowMs = now.getTime();
  if (req.retryable && current.attempt_count < d.maxAttempts) {
    const delay = retryDelay(d, current.attempt_count, req.retryDelayMs);
    const outcome = await Leases.scheduleRetry(batchId, req.workerId, nowMs, nowMs + delay, reason);
    if (!outcome.ok) throw await leaseFailure(batchId, req.workerId, outcome.batch);
    // The message stays in flight through the delay, so the chat's later batches wait (§4.4.2).
    // A delay under a second shows it again at once; the claim that receives it waits out the rest.
    const receipt = outcome.batch.receipt_handle;
    if (receipt) await settleMessage('retry delay', batchId, receipt, () => Queues.hideBatch(receipt, delay));
    // The batch is no longer leased: inputs that waited for it may seal now (§4.4.3 rule 2).
    if (d.mode === 'batched_sequential') {
      await Queues.sendFlush(current.chat_id, 0).catch((error: unknown) =>
        logger.error('dispatch: flush signal not sent', { batchId, error }),
      );
    }
    return;
  }
  const chat = await Chats.getChat(current.chat_id);
  if (!chat) throw batchNotFound();
  const text = `Dispatch failed after ${current.attempt_count} attempts: ${reason}`;
  const system = systemMessage(chat, text, { dispatchFailure: true }, now, deps.newId);
  // The batch's end, the system message, its chat counters and its event: one transaction.
  await withEvents(system.events, now.toISOString(), (eventItems) =>
    commitTouchingChat(
      current.chat_id,
      system.activity,
      [
        guarded(Leases.failBatchWrite(batchId, req.workerId, nowMs, reason, now.toISOString()), () =>
          leaseLost(batchId, req.workerId),
        ),
        ...system.items,
      ],
      eventItems,
      deadline,
    ),
  );
  await afterEnd(config, batchId, current.chat_id, current.receipt_handle);
}

/** After a batch ended: drop its message (the chat's next batch can flow) and signal sealing. */
async function afterEnd(
  config: InstanceConfig,
  batchId: string,
  chatId: string,
  receipt: string | undefined,
): Promise<void> {
  // Side by side (one round trip): a batch the flush seals meanwhile is sent to the chat's FIFO
  // message group, which holds it back until the ended batch's message is deleted anyway.
  await Promise.all([
    receipt
      ? settleMessage('drop an ended batch', batchId, receipt, () => Queues.deleteBatchMessage(receipt))
      : undefined,
    dispatchConfig(config).mode === 'batched_sequential'
      ? Queues.sendFlush(chatId, 0).catch((error: unknown) =>
          logger.error('dispatch: flush signal not sent', { chatId, error }),
        )
      : undefined,
  ]);
}
