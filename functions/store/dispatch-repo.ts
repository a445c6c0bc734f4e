/**
 * Dispatch storage (contract §4.4): inputs, the per-chat dispatch state and batches.
 *
 * - An input (CHAT#<chatId>/DIN#<ms>#<id>) is written in the same transaction as the user
 *   message or request resolution it comes from, together with the chat's dispatch state
 *   (CHAT#<chatId>/DSTATE: the unsealed window, user typing, batch numbering).
 * - Sealing puts a small batch header (BATCH#<id>/BATCH: the durable truth of its lease,
 *   attempts and status) and its frozen payload in parts (BATCH#<id>/PART#n), and lists the
 *   inputs it took in the dispatch state's `taken_inputs`, all in one transaction whose size
 *   does not grow with the number of inputs. The taken inputs are deleted afterwards
 *   (`releaseTaken`); until then readers skip them.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb, deleteMany, guarded, queryAll, tableName, transact } from './db.js';
import type { TransactItem, TransactWrite } from './db.js';
import { Keys } from './keys.js';
import { storable } from './storable.js';
import type { BatchMessage } from '../platform/queues.js';

export interface DispatchInput {
  id: string;
  chat_id: string;
  source_kind: 'user_message' | 'request_resolved';
  source_id: string;
  sender_id: string;
  /** The message text, or for a resolution the rendered line of §4.4.8 (fixed at resolve time). */
  content: string;
  trace_kind?: string;
  media_ids: string[];
  /** request_resolved inputs remember the request (§4.4.1). */
  request_type?: string;
  request_title?: string;
  resolution_payload?: Record<string, unknown>;
  state: 'pending' | 'batched';
  created_at: string;
}

/** The input and the chat's unsealed-window update, for the source's transaction. */
export function dispatchInputWrites(input: DispatchInput): TransactItem[] {
  return [
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...Keys.dispatchInput(input.chat_id, input.created_at, input.id),
          type: 'dispatch-input',
          ...input,
          resolution_payload: storable(input.resolution_payload),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: Keys.dispatchState(input.chat_id),
        UpdateExpression:
          'SET #type = :type, first_pending_at = if_not_exists(first_pending_at, :at), last_input_at = :at, gsi3pk ' +
          '= :mark, gsi3sk = :at ADD pending_inputs :one, ver :one',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: {
          ':type': 'dispatch-state',
          ':at': input.created_at,
          ':one': 1,
          ':mark': Keys.dispatchPending(input.created_at).gsi3pk,
        },
      },
    },
  ];
}

/** Records when the user was last seen typing in a chat, for the typing grace (§4.4.3). */
export const recordUserTyping = (chatId: string, now: string): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: Keys.dispatchState(chatId),
    UpdateExpression: 'SET #type = :type, last_user_typing_at = :now',
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':type': 'dispatch-state', ':now': now },
  },
});

export interface DispatchState {
  first_pending_at?: string;
  last_input_at?: string;
  last_user_typing_at?: string;
  pending_inputs?: number;
  /** The chat's batch leased last (sealing waits while its lease runs, §4.4.3 rule 2). */
  leased_batch_id?: string;
  /** Batches sealed so far (numbers 1..n) and the highest one handed to the queue, in order. */
  batches_sealed?: number;
  batches_sent?: number;
  /** The chat's newest batch in the sequential modes: the next one's predecessor (BatchRecord.prev_batch_id). */
  last_batch_id?: string;
  /** Sort keys of inputs sealed into a batch but not deleted yet (a string set). */
  taken_inputs?: Set<string>;
  ver?: number;
}

export const inputKey = (input: Pick<DispatchInput, 'chat_id' | 'created_at' | 'id'>) =>
  Keys.dispatchInput(input.chat_id, input.created_at, input.id);

export async function getState(chatId: string): Promise<DispatchState> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.dispatchState(chatId), ConsistentRead: true }),
  );
  return (out.Item ?? {}) as DispatchState;
}

/** A chat's unsealed inputs, oldest first (creation time, then id): those not in `taken`. */
export async function unsealedInputs(chatId: string, taken: ReadonlySet<string>): Promise<DispatchInput[]> {
  const { pk, skPrefix } = Keys.dispatchInputsOf(chatId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: true,
  });
  return items.filter((i) => !taken.has(String(i.sk))).map((i) => i as unknown as DispatchInput);
}

/** Deletes sealed inputs, then drops them from the chat's `taken_inputs` (safe to repeat). */
export async function releaseTaken(chatId: string, sks: string[]): Promise<void> {
  if (sks.length === 0) return;
  const { pk } = Keys.dispatchState(chatId);
  await deleteMany(sks.map((sk) => ({ pk, sk })));
  await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.dispatchState(chatId),
      UpdateExpression: 'DELETE taken_inputs :sks',
      ExpressionAttributeValues: { ':sks': new Set(sks) },
    }),
  );
}

export type BatchStatus = 'pending' | 'leased' | 'completed' | 'failed';

export interface BatchItem {
  inputId: string;
  sourceKind: 'user_message' | 'request_resolved';
  sourceId: string;
  senderId: string;
  content: string;
  traceKind?: string;
  mediaIds: string[];
  attachmentNames: string[];
}

export interface BatchAttachment {
  mediaId: string;
  fileName: string;
  kind: string;
  sourceInputId: string;
  sourceIndex: number;
}

/** A batch's frozen payload (§4.4.8), stored in parts beside its header. */
export interface BatchPayload {
  items: BatchItem[];
  attachments: BatchAttachment[];
}

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

export interface SealedBatch {
  header: BatchRecord;
  /** FIFO message group: the chat (sequential modes) or the batch itself (immediate). */
  group: string;
  parts: BatchPayload[];
}

/**
 * The seal: puts the batches (header, payload parts, queue-order reference), lists the inputs
 * they took in the chat's `taken_inputs`, and moves the chat's window and batch numbering,
 * conditioned on the state version read (a concurrent input or seal makes the caller read
 * again). Its size grows with the payload, not with the number of inputs.
 */
export function sealWrites(
  chatId: string,
  batches: SealedBatch[],
  takenSks: string[],
  state: DispatchState,
  remaining: { firstPendingAt?: string; lastInputAt?: string },
  nowIso: string,
  /** The answer when the chat's state moved meanwhile (or a batch id was taken): read again. */
  onStale: () => Error,
): TransactWrite[] {
  // The batches still have to be handed to the queue: the chat stays marked, its clock reset.
  const sets = ['#type = :type', 'batches_sealed = :sealed', 'gsi3pk = :mark', 'gsi3sk = :now'];
  const removes: string[] = [];
  // The next seal's predecessor: the newest batch, when it is in the chat's FIFO group.
  const newest = batches.at(-1);
  const chained = newest !== undefined && newest.group === chatId;
  if (chained) sets.push('last_batch_id = :newest');
  else removes.push('last_batch_id');
  const values: Record<string, unknown> = {
    ':type': 'dispatch-state',
    ':sealed': (state.batches_sealed ?? 0) + batches.length,
    ':taken': -takenSks.length,
    ':sks': new Set(takenSks),
    ':one': 1,
    ':mark': Keys.dispatchPending(nowIso).gsi3pk,
    ':now': nowIso,
    ...(chained ? { ':newest': newest.header.id } : {}),
  };
  if (remaining.firstPendingAt) {
    sets.push('first_pending_at = :first', 'last_input_at = :last');
    values[':first'] = remaining.firstPendingAt;
    values[':last'] = remaining.lastInputAt;
  } else {
    removes.push('first_pending_at', 'last_input_at');
  }
  const condition = state.ver === undefined ? 'attribute_not_exists(ver)' : 'ver = :ver';
  if (state.ver !== undefined) values[':ver'] = state.ver;
  const put = (Item: Record<string, unknown>): TransactWrite =>
    guarded({ Put: { TableName: tableName(), Item, ConditionExpression: 'attribute_not_exists(pk)' } }, onStale);
  return [
    ...batches.flatMap(({ header, group, parts }) => [
      put({ ...Keys.batch(header.id), type: 'dispatch-batch', ...header, queue_group: group }),
      ...parts.map((part, n) => put({ ...Keys.batchPart(header.id, n), type: 'dispatch-batch-part', ...part })),
      put({
        ...Keys.batchRef(chatId, header.chat_seq),
        type: 'dispatch-batch-ref',
        batch_id: header.id,
        group,
        ...(header.prev_batch_id ? { prev: header.prev_batch_id } : {}),
      }),
    ]),
    guarded(
      {
        Update: {
          TableName: tableName(),
          Key: Keys.dispatchState(chatId),
          UpdateExpression:
            `SET ${sets.join(', ')} ADD pending_inputs :taken, ver :one, taken_inputs ` +
            `:sks${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: { '#type': 'type' },
          ExpressionAttributeValues: values,
        },
      },
      onStale,
    ),
  ];
}

/** A batch's frozen payload, its parts joined in order. */
export async function getPayload(batchId: string): Promise<BatchPayload> {
  const { pk, skPrefix } = Keys.batchPartsOf(batchId);
  const parts = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: true,
  });
  return {
    items: parts.flatMap((p) => (p.items ?? []) as BatchItem[]),
    attachments: parts.flatMap((p) => (p.attachments ?? []) as BatchAttachment[]),
  };
}

/**
 * Unmarks a chat whose dispatch work is all done: no unsealed input, every sealed batch handed
 * to the queue. The condition keeps the mark when an input arrived meanwhile.
 */
export async function clearPendingMark(chatId: string): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: Keys.dispatchState(chatId),
        UpdateExpression: 'REMOVE gsi3pk, gsi3sk',
        ConditionExpression:
          'attribute_exists(gsi3pk) AND (attribute_not_exists(pending_inputs) OR pending_inputs = :zero) AND ' +
          '(attribute_not_exists(batches_sealed) OR batches_sent = batches_sealed)',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** Chats marked with dispatch work whose mark has not moved since `before` (oldest first). */
export async function staleDispatchWork(before: string, limit: number): Promise<string[]> {
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :mark AND gsi3sk < :before',
      ExpressionAttributeValues: { ':mark': Keys.dispatchPending(before).gsi3pk, ':before': before },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => Keys.chatIdOf(String(i.pk)));
}

/** The unsent batch numbered `seq` in a chat, if any, as its queue message names it. */
export async function batchRef(chatId: string, seq: number): Promise<BatchMessage | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.batchRef(chatId, seq), ConsistentRead: true }),
  );
  const item = out.Item;
  if (!item) return undefined;
  return { id: String(item.batch_id), group: String(item.group), ...(item.prev ? { prev: String(item.prev) } : {}) };
}

/** A batch's queue message, from its header (a repair's or a restore's copy). */
export const messageOf = (batch: BatchRecord): BatchMessage => ({
  id: batch.id,
  group: batch.queue_group ?? batch.chat_id,
  ...(batch.prev_batch_id ? { prev: batch.prev_batch_id } : {}),
});

/**
 * Claims the step "hand batch `seq` to the queue": only right after seq - 1, once. Drops the
 * batch's unsent reference in the same transaction.
 */
export async function markSent(chatId: string, seq: number): Promise<boolean> {
  const condition = seq === 1 ? 'attribute_not_exists(batches_sent)' : 'batches_sent = :prev';
  try {
    const taken = () => new StepTaken();
    await transact([
      guarded(
        {
          Update: {
            TableName: tableName(),
            Key: Keys.dispatchState(chatId),
            UpdateExpression: 'SET batches_sent = :seq',
            ConditionExpression: condition,
            ExpressionAttributeValues: seq === 1 ? { ':seq': seq } : { ':seq': seq, ':prev': seq - 1 },
          },
        },
        taken,
      ),
      guarded(
        {
          Delete: {
            TableName: tableName(),
            Key: Keys.batchRef(chatId, seq),
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
        taken,
      ),
    ]);
    return true;
  } catch (error) {
    if (error instanceof StepTaken) return false;
    throw error;
  }
}

class StepTaken extends Error {}

export async function getBatch(batchId: string): Promise<BatchRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.batch(batchId), ConsistentRead: true }),
  );
  return out.Item as BatchRecord | undefined;
}

export type BatchUpdateOutcome = { ok: true; batch: BatchRecord } | { ok: false; batch: BatchRecord | undefined };

/** A conditional UpdateItem on a batch that returns the new item, or the old one on failure. */
async function updateBatch(
  batchId: string,
  update: Pick<
    UpdateCommandInput,
    'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues' | 'ExpressionAttributeNames'
  >,
): Promise<BatchUpdateOutcome> {
  try {
    const out = await ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: Keys.batch(batchId),
        ...update,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { ok: true, batch: out.Attributes as BatchRecord };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      return { ok: false, batch: error.Item ? (unmarshall(error.Item) as BatchRecord) : undefined };
    }
    throw error;
  }
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
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: Keys.batch(batchId),
        UpdateExpression: 'REMOVE gsi3pk, gsi3sk, repair_receipt',
        ConditionExpression: 'gsi3sk = :at',
        ExpressionAttributeValues: { ':at': markedAt },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
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

/** Sets the chat's last leased batch (read by sealing), in the lease's own call sequence. */
export async function noteLeased(chatId: string, batchId: string): Promise<void> {
  await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.dispatchState(chatId),
      UpdateExpression: 'SET #type = :type, leased_batch_id = :id',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':type': 'dispatch-state', ':id': batchId },
    }),
  );
}
