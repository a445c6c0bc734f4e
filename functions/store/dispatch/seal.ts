/**
 * The seal's writes (contract §4.4.3): one transaction that puts the new batches (header, payload
 * parts, unsent reference), lists the inputs they took in the chat's `taken_inputs` and moves the
 * chat's window and batch numbering. Its size grows with the payload, not with the number of
 * inputs; the taken inputs are deleted afterwards (inputs.ts `releaseTaken`).
 */
import { guarded, putNew, tableName } from '../db.js';
import type { TransactWrite } from '../db.js';
import { Keys } from '../keys.js';
import type { BatchRecord } from './batches.js';
import type { BatchPayload } from './payloads.js';
import type { DispatchState } from './state.js';

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
  const put = (Item: Record<string, unknown>): TransactWrite => guarded(putNew(Item), onStale);
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
