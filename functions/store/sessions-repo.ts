/**
 * Browser-session records (core/sessions.ts, contract §1.11.1): one small item per session
 * (Keys.session), present while the session may be used. Signing out deletes it; signing out
 * everywhere deletes them all; it carries a TTL at the session's expiry, so an abandoned one goes
 * by itself (DynamoDB's TTL deletes within days: the expiry is checked on every read too).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, deleteIf, deleteMany, queryAll, tableName, updateIf } from './db.js';
import { Keys } from './keys.js';

const ttlOf = (expiresMs: number) => Math.ceil(expiresMs / 1000);

/** Records a new session (one PutItem, 1 WCU). */
export async function putSession(sessionId: string, expiresMs: number): Promise<void> {
  await ddb().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...Keys.session(sessionId), type: 'session', expiresAt: expiresMs, ttl: ttlOf(expiresMs) },
    }),
  );
}

/**
 * When the session expires (epoch ms), or undefined when it has no record: revoked, expired or
 * never made. One strongly consistent GetItem (1 RRU): a session made a moment ago in another
 * function instance must be found.
 */
export async function sessionExpiry(sessionId: string): Promise<number | undefined> {
  const out = await ddb().send(
    new GetCommand({
      TableName: tableName(),
      Key: Keys.session(sessionId),
      ConsistentRead: true,
      ProjectionExpression: 'expiresAt',
    }),
  );
  const expires = Number(out.Item?.expiresAt);
  return Number.isFinite(expires) ? expires : undefined;
}

/**
 * Moves a session's expiry later (renewal), only while its record exists: a session revoked
 * meanwhile stays revoked. Whether it was renewed (one conditional UpdateItem, 1 WCU).
 */
export async function extendSession(sessionId: string, expiresMs: number): Promise<boolean> {
  const out = await updateIf({
    Key: Keys.session(sessionId),
    UpdateExpression: 'SET expiresAt = :expires, #ttl = :ttl',
    ConditionExpression: 'attribute_exists(pk) AND expiresAt < :expires',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: { ':expires': expiresMs, ':ttl': ttlOf(expiresMs) },
  });
  return out.ok;
}

/** Deletes one session's record (one DeleteItem, 1 WCU; nothing to delete is no error). */
export async function deleteSession(sessionId: string): Promise<void> {
  await deleteIf({ Key: Keys.session(sessionId) });
}

/**
 * Deletes every session's record: one Query of the sessions' partition (keys only, 1 MB a page)
 * and one BatchWriteItem per 25 sessions. A session made while this runs may survive it (it was
 * made after the sign-out began).
 */
export async function deleteAllSessions(): Promise<number> {
  const { pk, skPrefix } = Keys.sessions;
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
    ProjectionExpression: 'pk, sk',
    ConsistentRead: true,
  });
  await deleteMany(items.map((item) => ({ pk: item.pk, sk: item.sk })));
  return items.length;
}
