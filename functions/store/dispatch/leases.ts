/**
 * A batch header's lease transitions (contract §4.4.4 to §4.4.6), each one conditional UpdateItem
 * answering the batch as it is now, or as it was when the condition failed: lease (from pending,
 * or taking over an expired lease), give back, heartbeat, complete, retry later, fail for good
 * (the last inside the system message's transaction), and the newest receipt of a leased batch.
 */
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableName, updateIf } from '../db.js';
import type { TransactItem } from '../db.js';
import { Keys } from '../keys.js';
import type { BatchRecord } from './batches.js';

export type BatchUpdateOutcome = { ok: true; batch: BatchRecord } | { ok: false; batch: BatchRecord | undefined };

/** A conditional UpdateItem on a batch that returns the new item, or the old one on failure. */
async function updateBatch(
  batchId: string,
  update: Pick<
    UpdateCommandInput,
    'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues' | 'ExpressionAttributeNames'
  >,
): Promise<BatchUpdateOutcome> {
  const outcome = await updateIf({
    Key: Keys.batch(batchId),
    ...update,
    ReturnValues: 'ALL_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  return outcome.ok
    ? { ok: true, batch: outcome.item as unknown as BatchRecord }
    : { ok: false, batch: outcome.old as BatchRecord | undefined };
}

/**
 * Records the receipt handle of the newest receive of a leased batch's message (a claim that
 * saw it reappear near the lease's end), so the holder's complete deletes the right one.
 */
export async function noteReceipt(
  batchId: string,
  owner: string,
  expiresAt: number,
  receiptHandle: string,
): Promise<boolean> {
  const outcome = await updateBatch(batchId, {
    UpdateExpression: 'SET receipt_handle = :receipt',
    ConditionExpression: '#status = :leased AND lease_owner = :owner AND lease_expires_at = :expires',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':receipt': receiptHandle,
      ':leased': 'leased',
      ':owner': owner,
      ':expires': expiresAt,
    },
  });
  return outcome.ok;
}

/** The lease condition of heartbeat, complete and fail (§4.4.4), with `leaseValues`. */
const LEASE_HELD = '#status = :leased AND lease_owner = :worker AND lease_expires_at > :now';
const leaseValues = (workerId: string, now: number) => ({ ':leased': 'leased', ':worker': workerId, ':now': now });
const STATUS = { '#status': 'status' };

/**
 * Leases a batch to `workerId` until `now + leaseMs`, counting an attempt, recording the
 * receipt handle it was received with: from `pending` when due, or taking over a `leased` one
 * whose lease ran out (§4.4.4; its first error, if none yet, is "lease expired").
 */
export function leaseBatch(
  batchId: string,
  l: { from: 'pending' | 'expired'; workerId: string; now: number; leaseMs: number; receiptHandle: string },
): Promise<BatchUpdateOutcome> {
  const expired = l.from === 'expired';
  const values: Record<string, unknown> = {
    ':leased': 'leased',
    ':worker': l.workerId,
    ':expires': l.now + l.leaseMs,
    ':receipt': l.receiptHandle,
    ':started': new Date(l.now).toISOString(),
    ':one': 1,
    ':now': l.now,
  };
  return updateBatch(batchId, {
    UpdateExpression:
      `SET #status = :leased, lease_owner = :worker, lease_expires_at = :expires, receipt_handle = ` +
      `:receipt, started_at = if_not_exists(started_at, ` +
      `:started)${expired ? ', last_error = if_not_exists(last_error, :expiredError)' : ''} ADD attempt_count :one`,
    ConditionExpression: expired
      ? '#status = :leased AND lease_expires_at <= :now'
      : '#status = :pending AND available_at <= :now',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: expired
      ? { ...values, ':expiredError': 'lease expired' }
      : { ...values, ':pending': 'pending' },
  });
}

/** Gives a batch leased by `workerId` back, due now, uncounting the attempt (a claim that must not return it). */
export function returnBatch(batchId: string, workerId: string, now: number): Promise<BatchUpdateOutcome> {
  return updateBatch(batchId, {
    UpdateExpression:
      'SET #status = :pending, available_at = :now ADD attempt_count :minusOne REMOVE lease_owner, lease_expires_at',
    ConditionExpression: '#status = :leased AND lease_owner = :worker',
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':now': now,
      ':minusOne': -1,
      ':leased': 'leased',
      ':worker': workerId,
    },
  });
}

/** Heartbeat: the lease held by `workerId` now runs until `now + extendMs`. */
export function extendLease(
  batchId: string,
  workerId: string,
  now: number,
  extendMs: number,
): Promise<BatchUpdateOutcome> {
  return updateBatch(batchId, {
    UpdateExpression: 'SET lease_expires_at = :expires',
    ConditionExpression: LEASE_HELD,
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: { ...leaseValues(workerId, now), ':expires': now + extendMs },
  });
}

/** Completes a batch whose lease `workerId` holds. The receipt handle stays: it deletes the queue message. */
export function completeBatch(batchId: string, workerId: string, now: Date): Promise<BatchUpdateOutcome> {
  return updateBatch(batchId, {
    UpdateExpression: 'SET #status = :completed, completed_at = :at REMOVE lease_owner, lease_expires_at',
    ConditionExpression: LEASE_HELD,
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ...leaseValues(workerId, now.getTime()),
      ':completed': 'completed',
      ':at': now.toISOString(),
    },
  });
}

/** A retryable failure by the lease holder: pending again, due at `availableAt`, with its reason. */
export function scheduleRetry(
  batchId: string,
  workerId: string,
  now: number,
  availableAt: number,
  reason: string,
): Promise<BatchUpdateOutcome> {
  return updateBatch(batchId, {
    UpdateExpression:
      'SET #status = :pending, available_at = :at, last_error = :reason REMOVE lease_owner, lease_expires_at',
    ConditionExpression: LEASE_HELD,
    ExpressionAttributeNames: STATUS,
    ExpressionAttributeValues: {
      ...leaseValues(workerId, now),
      ':pending': 'pending',
      ':at': availableAt,
      ':reason': reason,
    },
  });
}

/** The batch's side of a terminal failure, for the system message's transaction. */
export function failBatchWrite(
  batchId: string,
  worker: string,
  nowMs: number,
  reason: string,
  nowIso: string,
): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.batch(batchId),
      UpdateExpression:
        'SET #status = :failed, last_error = :reason, completed_at = :at REMOVE lease_owner, lease_expires_at, ' +
        'receipt_handle',
      ConditionExpression: LEASE_HELD,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':failed': 'failed',
        ':reason': reason,
        ':at': nowIso,
        ':leased': 'leased',
        ':worker': worker,
        ':now': nowMs,
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}
