/**
 * Unsent batch references (CHAT#<chatId>/BREF#<chat seq>): a sealed batch of a chat not yet handed
 * to the queue, by its number in the chat. The seal (seal.ts) puts one per batch; `markSent`
 * drops it as the chat's state records the batch handed over, strictly in order.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, guarded, tableName, transact } from '../db.js';
import { Keys } from '../keys.js';
import type { Deadline } from '../../platform/deadline.js';
import type { BatchMessage } from '../../platform/queues.js';

/** The unsent batch numbered `seq` in a chat, if any, as its queue message names it. */
export async function batchRef(chatId: string, seq: number): Promise<BatchMessage | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.batchRef(chatId, seq), ConsistentRead: true }),
  );
  const item = out.Item;
  if (!item) return undefined;
  return { id: String(item.batch_id), group: String(item.group), ...(item.prev ? { prev: String(item.prev) } : {}) };
}

/**
 * Claims the step "hand batch `seq` to the queue": only right after seq - 1, once. Drops the
 * batch's unsent reference in the same transaction.
 */
export async function markSent(chatId: string, seq: number, deadline: Deadline): Promise<boolean> {
  const condition = seq === 1 ? 'attribute_not_exists(batches_sent)' : 'batches_sent = :prev';
  try {
    const taken = () => new StepTaken();
    await transact(
      [
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
      ],
      deadline,
    );
    return true;
  } catch (error) {
    if (error instanceof StepTaken) return false;
    throw error;
  }
}

class StepTaken extends Error {}
