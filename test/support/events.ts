/**
 * Reads the persisted event log straight from the test's table (the SSE endpoint that
 * serves it arrives later), in sequence order.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb } from '../../functions/store/db.js';
import { EPHEMERAL_BUCKET_MS, Keys } from '../../functions/store/keys.js';

/** Every item of partition `pk`, page after page, read consistently. */
async function queryPartition(tableName: string, pk: string): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
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
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

export interface LoggedEvent {
  seq: number;
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, any>;
}

export async function readEvents(tableName: string): Promise<LoggedEvent[]> {
  const events: LoggedEvent[] = [];
  for (const item of await queryPartition(tableName, 'EVT#0')) {
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
    for (const item of await queryPartition(tableName, pk)) {
      if (Date.parse(item.timestamp) >= sinceMs)
        events.push({ id: item.id, type: item.eventType, timestamp: item.timestamp, payload: item.payload });
    }
  }
  return events;
}
