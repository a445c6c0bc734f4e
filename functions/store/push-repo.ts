/**
 * Push subscriptions (contract §2.6, §7.2) and the per-event "sent" marks of the notifier.
 * A subscription is keyed by a hash of its normalized endpoint, so subscribing again is one
 * UpdateItem that keeps the stored id (no read first, no duplicate row under concurrency).
 */
import { createHash } from 'node:crypto';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, deleteIf, putIfAbsent, queryAll, tableName } from './db.js';
import { Keys } from './keys.js';

export interface PushSubscription {
  id: string;
  endpoint: string;
  keys_p256dh: string;
  keys_auth: string;
  user_agent: string | null;
  created_at: string;
}

const endpointKey = (endpoint: string) =>
  Keys.pushSubscription(createHash('sha256').update(endpoint).digest('base64url'));

const toSubscription = (item: Record<string, unknown>): PushSubscription => ({
  id: String(item.id),
  endpoint: String(item.endpoint),
  keys_p256dh: String(item.keys_p256dh),
  keys_auth: String(item.keys_auth),
  user_agent: typeof item.user_agent === 'string' ? item.user_agent : null,
  created_at: String(item.created_at),
});

/**
 * Stores a subscription, or refreshes the one with the same endpoint (keys, user agent,
 * created_at) keeping its id. Returns the stored subscription. One UpdateItem.
 */
export async function upsertSubscription(sub: Omit<PushSubscription, 'id'>, newId: string): Promise<PushSubscription> {
  const out = await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: endpointKey(sub.endpoint),
      UpdateExpression:
        'SET #id = if_not_exists(#id, :id), #type = :type, endpoint = :endpoint, keys_p256dh = :p256dh, ' +
        'keys_auth = :auth, user_agent = :ua, created_at = :at',
      ExpressionAttributeNames: { '#id': 'id', '#type': 'type' },
      ExpressionAttributeValues: {
        ':id': newId,
        ':type': 'push-subscription',
        ':endpoint': sub.endpoint,
        ':p256dh': sub.keys_p256dh,
        ':auth': sub.keys_auth,
        ':ua': sub.user_agent,
        ':at': sub.created_at,
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return toSubscription(out.Attributes ?? {});
}

/** Deletes the subscription of an endpoint; true when one was stored. One DeleteItem. */
export async function deleteSubscription(endpoint: string): Promise<boolean> {
  const out = await ddb().send(
    new DeleteCommand({ TableName: tableName(), Key: endpointKey(endpoint), ReturnValues: 'ALL_OLD' }),
  );
  return out.Attributes !== undefined;
}

/**
 * Deletes a subscription the push service refused, unless it was subscribed again meanwhile
 * (new keys): the refusal was about the old keys. True when it was deleted.
 */
export async function deleteRefusedSubscription(sub: PushSubscription): Promise<boolean> {
  const deleted = await deleteIf({
    Key: endpointKey(sub.endpoint),
    ConditionExpression: 'keys_p256dh = :p256dh AND keys_auth = :auth',
    ExpressionAttributeValues: { ':p256dh': sub.keys_p256dh, ':auth': sub.keys_auth },
  });
  return deleted.ok;
}

/** Every stored subscription (one small partition; one Query per MB). */
export async function listSubscriptions(): Promise<PushSubscription[]> {
  const { pk, skPrefix } = Keys.pushSubscriptions;
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
  });
  return items.map(toSubscription);
}

/** How long a sent mark outlives its event's possible redeliveries (stream records live 24 h). */
const SENT_MARK_TTL_SECONDS = 2 * 24 * 3600;

/**
 * Marks an event's notification as sent; false when it already was (a redelivered record).
 * One conditional PutItem, written before sending: at most once, never twice.
 */
export async function markNotified(eventId: string, nowMs: number): Promise<boolean> {
  const mark = await putIfAbsent({
    Item: { ...Keys.pushSent(eventId), type: 'push-sent', ttl: Math.floor(nowMs / 1000) + SENT_MARK_TTL_SECONDS },
  });
  return mark.ok;
}
