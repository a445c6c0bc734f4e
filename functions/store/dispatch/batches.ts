/**
 * The batch header (BATCH#<id>/BATCH): the durable truth of a batch's status, lease, attempts and
 * due time, kept small so a lease, heartbeat or completion costs one write unit. Here: its shape,
 * its read, its queue message, and the repair mark (gsi3 DISPATCH#REPAIR) set after a failed queue
 * call on its message. Its lease transitions are in leases.ts.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName, updateIf } from '../db.js';
import { Keys } from '../keys.js';
import type { BatchMessage } from '../../platform/queues.js';

export type BatchStatus = 'pending' | 'leased' | 'completed' | 'failed';

/** The batch header: small, so a lease, heartbeat or completion costs one write unit. */
export interface BatchRecord {
  id: string;
  chat_id: string;
  kind: 'user_batch' | 'request_batch';
  status: BatchStatus;
  /** The batch's number within its chat (1, 2, …): queue order. */
  chat_seq: number;
  /**
   * The chat's previous batch (sequential modes; absent for the first, for immediate mode, and
   * on batches sealed before it was recorded): it must be settled before this one is leased.
   */
  prev_batch_id?: string;
  attempt_count: number;
  lease_owner?: string;
  /** Epoch ms. */
  lease_expires_at?: number;
  available_at: number;
  receipt_handle?: string;
  started_at?: string;
  completed_at?: string;
  last_error?: string;
  created_at: string;
  item_count: number;
  part_count: number;
  /** JSON size of the payload (claim-many keeps its response under Lambda's limit). */
  payload_bytes: number;
  /** Its FIFO message group (absent on batches sealed before it was recorded: the chat). */
  queue_group?: string;
  /** Set with the DISPATCH#REPAIR mark: the receipt handle the failed queue call used. */
  repair_receipt?: string;
  gsi3sk?: string;
}

export async function getBatch(batchId: string): Promise<BatchRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.batch(batchId), ConsistentRead: true }),
  );
  return out.Item as BatchRecord | undefined;
}

/** A batch's queue message, from its header (a repair's or a restore's copy). */
export const messageOf = (batch: BatchRecord): BatchMessage => ({
  id: batch.id,
  group: batch.queue_group ?? batch.chat_id,
  ...(batch.prev_batch_id ? { prev: batch.prev_batch_id } : {}),
});

/**
 * Marks a batch for the sweeper after a queue call on its message failed (not merely stale):
 * the sweeper re-applies what the table says (hidden until due, or deleted when finished).
 */
export async function markRepair(batchId: string, receiptHandle: string, nowIso: string): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.batch(batchId),
      UpdateExpression: 'SET gsi3pk = :mark, gsi3sk = :now, repair_receipt = :receipt',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: {
        ':mark': Keys.dispatchRepair(nowIso).gsi3pk,
        ':now': nowIso,
        ':receipt': receiptHandle,
      },
    }),
  );
}

/** Batches marked for repair, oldest first. */
export async function batchesToRepair(limit: number): Promise<string[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :mark',
      ExpressionAttributeValues: { ':mark': Keys.dispatchRepair('').gsi3pk },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => Keys.batchIdOf(String(i.pk)));
}

/** Drops a batch's repair mark, unless a newer failure marked it again meanwhile. */
export async function clearRepair(batchId: string, markedAt: string): Promise<void> {
  // A failed condition is that newer mark: it stays for the next run.
  await updateIf({
    Key: Keys.batch(batchId),
    UpdateExpression: 'REMOVE gsi3pk, gsi3sk, repair_receipt',
    ConditionExpression: 'gsi3sk = :at',
    ExpressionAttributeValues: { ':at': markedAt },
  });
}
