/**
 * Reads the persisted event log straight from the test's table (the SSE endpoint that
 * serves it arrives later), in sequence order.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../functions/store/db.js';
import { EPHEMERAL_BUCKET_MS, Keys } from '../../functions/store/keys.js';

export interface LoggedEvent {
  seq: number;
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, any>;
}

export async function readEvents(tableName: string): Promise<LoggedEvent[]> {
  const events: LoggedEvent[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await ddb().send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'EVT#0' },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    for (const item of out.Items ?? []) {
      // Voided numbers (a mutation that reserved them and then failed) hold no event.
      if (!item.void)
        events.push({
          seq: item.seq,
          id: item.id,
          type: item.eventType,
          timestamp: item.timestamp,
          payload: item.payload,
        });
    }
    start = out.LastEvaluatedKey;
  } while (start);
  return events;
}

/** Events logged after `count` earlier ones: what one operation appended. */
export async function eventsSince(tableName: string, count: number): Promise<LoggedEvent[]> {
  return (await readEvents(tableName)).slice(count);
}

export interface EphemeralEvent {
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, any>;
}

/**
 * Ephemeral events (typing, chunks) written at or after `sinceMs`, in time order, read from
 * their 10-second buckets.
 */
export async function readEphemeral(tableName: string, sinceMs: number): Promise<EphemeralEvent[]> {
  const events: EphemeralEvent[] = [];
  const until = Date.now() + 1000;
  for (
    let bucket = Math.floor(sinceMs / EPHEMERAL_BUCKET_MS);
    bucket <= Math.floor(until / EPHEMERAL_BUCKET_MS);
    bucket++
  ) {
    const { pk } = Keys.ephemeralEvent(bucket * EPHEMERAL_BUCKET_MS, 'x');
    let start: Record<string, unknown> | undefined;
    do {
      const out = await ddb().send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': pk },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) {
        if (Date.parse(item.timestamp) >= sinceMs)
          events.push({ id: item.id, type: item.eventType, timestamp: item.timestamp, payload: item.payload });
      }
      start = out.LastEvaluatedKey;
    } while (start);
  }
  return events;
}
