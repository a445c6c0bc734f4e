/**
 * The per-chat dispatch state (CHAT#<chatId>/DSTATE): the unsealed window, user typing, the
 * chat's batch numbering and the inputs a seal took. While the chat has dispatch work (unsealed
 * inputs, sealed batches not yet handed to the queue) it is marked in gsi3 (DISPATCH#PENDING),
 * which the sweeper reads.
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName, updateIf } from '../db.js';
import type { TransactItem } from '../db.js';
import { Keys } from '../keys.js';

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

export async function getState(chatId: string): Promise<DispatchState> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.dispatchState(chatId), ConsistentRead: true }),
  );
  return (out.Item ?? {}) as DispatchState;
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

/**
 * Unmarks a chat whose dispatch work is all done: no unsealed input, every sealed batch handed
 * to the queue. The condition keeps the mark when an input arrived meanwhile.
 */
export async function clearPendingMark(chatId: string): Promise<void> {
  // A failed condition leaves the mark: nothing to do.
  await updateIf({
    Key: Keys.dispatchState(chatId),
    UpdateExpression: 'REMOVE gsi3pk, gsi3sk',
    ConditionExpression:
      'attribute_exists(gsi3pk) AND (attribute_not_exists(pending_inputs) OR pending_inputs = :zero) AND ' +
      '(attribute_not_exists(batches_sealed) OR batches_sent = batches_sealed)',
    ExpressionAttributeValues: { ':zero': 0 },
  });
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
