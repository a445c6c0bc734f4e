/**
 * Outbound webhook bookkeeping (contract §6.6), kept with the event (30 days, TTL): a claim per
 * event and hook, written before the first attempt so a redelivered stream record never
 * delivers twice, and one record per attempt (URL, status, success, error) for diagnostics.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, putIfAbsent, queryAll, tableName } from './db.js';
import { EVENT_RETENTION_SECONDS } from './events-repo.js';
import { Keys } from './keys.js';

export interface DeliveryAttempt {
  eventId: string;
  hookId: string;
  url: string;
  attempt: number;
  /** The HTTP status, or null when no response came (network error, timeout). */
  status: number | null;
  success: boolean;
  error: string | null;
  at: string;
}

const ttlFrom = (nowMs: number) => Math.floor(nowMs / 1000) + EVENT_RETENTION_SECONDS;

/** Takes the delivery of `eventId` to `hookId`; false when it was taken before (a redelivery). */
export async function claimDelivery(eventId: string, hookId: string, nowMs: number): Promise<boolean> {
  const claim = await putIfAbsent({
    Item: { ...Keys.hookClaim(eventId, hookId), type: 'hook-claim', ttl: ttlFrom(nowMs) },
  });
  return claim.ok;
}

export async function recordAttempt(attempt: DeliveryAttempt): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...Keys.hookAttempt(attempt.eventId, attempt.hookId, attempt.attempt),
        type: 'hook-attempt',
        ...attempt,
        ttl: ttlFrom(Date.parse(attempt.at)),
      },
    }),
  );
}

/** Every recorded attempt of an event's deliveries, by hook then attempt. */
export async function attemptsOf(eventId: string): Promise<DeliveryAttempt[]> {
  const { pk, skPrefix } = Keys.hookAttemptsOf(eventId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ConsistentRead: true,
  });
  return items.map((i) => ({
    eventId: String(i.eventId),
    hookId: String(i.hookId),
    url: String(i.url),
    attempt: Number(i.attempt),
    status: i.status === null || i.status === undefined ? null : Number(i.status),
    success: i.success === true,
    error: i.error === null || i.error === undefined ? null : String(i.error),
    at: String(i.at),
  }));
}
