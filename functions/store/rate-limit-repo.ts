/**
 * Fixed-window write counters shared by every function instance (contract §1.12). One
 * item per client holds the window start and its count. Cost: one conditional UpdateItem
 * per counted write; a second one when a window rolls over.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb, tableName } from './db.js';
import { Keys } from './keys.js';

export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export async function countWrite(client: string, now: number, max: number, windowMs: number): Promise<RateDecision> {
  const key = Keys.rateLimit(client);
  const ttl = Math.ceil((now + windowMs) / 1000) + 60;
  for (let attempt = 0; attempt < 3; attempt++) {
    // 1. Count into the open window, if there is one with room left.
    try {
      await ddb().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: 'SET #count = #count + :one',
          ConditionExpression: 'attribute_exists(pk) AND windowStart > :openAfter AND #count < :max',
          ExpressionAttributeNames: { '#count': 'count' },
          ExpressionAttributeValues: { ':one': 1, ':openAfter': now - windowMs, ':max': max },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      const old = error.Item ? unmarshall(error.Item) : undefined;
      if (old && Number(old.windowStart) > now - windowMs) {
        // The window is open and full: not counted, retry after it ends.
        return { allowed: false, retryAfterMs: Number(old.windowStart) + windowMs - now };
      }
    }
    // 2. No open window: this request opens one (unless a concurrent request just did).
    try {
      await ddb().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: key,
          UpdateExpression: 'SET windowStart = :now, #count = :one, #type = :type, #ttl = :ttl',
          ConditionExpression: 'attribute_not_exists(pk) OR windowStart <= :openAfter',
          ExpressionAttributeNames: { '#count': 'count', '#type': 'type', '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ':now': now,
            ':one': 1,
            ':openAfter': now - windowMs,
            ':type': 'rate-limit',
            ':ttl': ttl,
          },
        }),
      );
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  }
  // Three lost races in a row: the window is under heavy contention; let this one through.
  return { allowed: true };
}
