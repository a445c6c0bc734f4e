/**
 * Message storage. A message lives in its chat's partition (CHAT#<chatId>, sorted by creation
 * time) so per-chat lists are strongly consistent; a small pointer item (MSG#<id>/PTR) written
 * in the same transaction finds it by id alone.
 */
import type { Message } from '../core/model.js';
import { tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

export function putMessage(message: Message): TransactItem[] {
  const key = Keys.message(message.chat_id, message.created_at, message.id);
  return [
    {
      Put: {
        TableName: tableName(),
        Item: { ...key, type: 'message', ...message },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...Keys.messagePointer(message.id), type: 'message-pointer', chat_id: message.chat_id, message_sk: key.sk },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}
