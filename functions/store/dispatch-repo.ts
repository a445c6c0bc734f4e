/**
 * Dispatch inputs (contract §4.4.1), written in the same transaction as the user message or
 * request resolution they come from. The dispatch consumer (a later issue) compiles them into
 * batches; they sit in the chat's partition in creation order.
 */
import { tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

export interface DispatchInput {
  id: string;
  chat_id: string;
  source_kind: 'user_message' | 'request_resolved';
  source_id: string;
  sender_id: string;
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

export const putDispatchInput = (input: DispatchInput): TransactItem => ({
  Put: {
    TableName: tableName(),
    Item: { ...Keys.dispatchInput(input.chat_id, input.created_at, input.id), type: 'dispatch-input', ...input },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

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
