/**
 * Dispatch inputs (contract §4.4.1): CHAT#<chatId>/DIN#<ms>#<id>, one per user message or request
 * resolution a worker must see. An input is written in the same transaction as its source,
 * together with the chat's dispatch state (state.ts); a seal lists the inputs it took in that
 * state's `taken_inputs` and deletes them afterwards (`releaseTaken`); until then readers skip them.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, deleteMany, putNew, queryAll, tableName } from '../db.js';
import type { TransactItem } from '../db.js';
import { Keys } from '../keys.js';
import { storable } from '../storable.js';

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
    putNew({
      ...Keys.dispatchInput(input.chat_id, input.created_at, input.id),
      type: 'dispatch-input',
      ...input,
      resolution_payload: storable(input.resolution_payload),
    }),
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

export const inputKey = (input: Pick<DispatchInput, 'chat_id' | 'created_at' | 'id'>) =>
  Keys.dispatchInput(input.chat_id, input.created_at, input.id);

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
