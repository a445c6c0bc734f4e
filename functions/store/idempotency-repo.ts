/**
 * Idempotency records (contract §1.10). One item per key (stored as a SHA-256 of the key):
 * IN_PROGRESS while the first request runs (with a lock that lapses if its function dies),
 * then COMPLETED with the 2xx status and body until `expiresAt`. DynamoDB's TTL removes
 * old items eventually; `expiresAt` makes an expired record count as absent right away.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { ddb, tableName } from './db.js';
import { Keys } from './keys.js';

export interface StoredResponse {
  statusCode: number;
  body: string;
}
export interface IdempotencyRecord {
  fingerprint: string;
  status: 'IN_PROGRESS' | 'COMPLETED';
  lockExpiresAt?: number;
  expiresAt?: number;
  statusCode?: number;
  body?: string;
}

export type Reservation = { reserved: true } | { reserved: false; existing: IdempotencyRecord };

/** A record that no longer counts: completed and expired, or in progress with a lapsed lock. */
export const isLive = (record: IdempotencyRecord, now: number): boolean =>
  record.status === 'COMPLETED' ? (record.expiresAt ?? 0) > now : (record.lockExpiresAt ?? 0) > now;

export async function reserve(keyHash: string, fingerprint: string, now: number, lockMs: number): Promise<Reservation> {
  try {
    await ddb().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...Keys.idempotency(keyHash),
          type: 'idempotency',
          status: 'IN_PROGRESS',
          fingerprint,
          lockExpiresAt: now + lockMs,
          ttl: Math.ceil((now + lockMs) / 1000) + 3600,
        },
        ConditionExpression:
          'attribute_not_exists(pk) OR (#status = :completed AND expiresAt <= :now) OR (#status = :inProgress AND ' +
          'lockExpiresAt <= :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':completed': 'COMPLETED', ':inProgress': 'IN_PROGRESS', ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { reserved: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    return { reserved: false, existing: unmarshall(error.Item) as IdempotencyRecord };
  }
}

export async function read(keyHash: string): Promise<IdempotencyRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.idempotency(keyHash), ConsistentRead: true }),
  );
  return out.Item as IdempotencyRecord | undefined;
}

/** Stores the response of our own reservation; lasts `ttlSeconds` from now. */
export async function complete(
  keyHash: string,
  fingerprint: string,
  response: StoredResponse,
  now: number,
  ttlSeconds: number,
): Promise<void> {
  const expiresAt = now + ttlSeconds * 1000;
  await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.idempotency(keyHash),
      UpdateExpression:
        'SET #status = :completed, statusCode = :code, body = :body, expiresAt = :expiresAt, #ttl = :ttl REMOVE ' +
        'lockExpiresAt',
      ConditionExpression: 'fingerprint = :fp AND #status = :inProgress',
      ExpressionAttributeNames: { '#status': 'status', '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':completed': 'COMPLETED',
        ':inProgress': 'IN_PROGRESS',
        ':code': response.statusCode,
        ':body': response.body,
        ':expiresAt': expiresAt,
        ':ttl': Math.ceil(expiresAt / 1000),
        ':fp': fingerprint,
      },
    }),
  );
}

/** Releases our own in-progress reservation so a retry executes again. */
export async function release(keyHash: string, fingerprint: string): Promise<void> {
  try {
    await ddb().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: Keys.idempotency(keyHash),
        ConditionExpression: 'fingerprint = :fp AND #status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':fp': fingerprint, ':inProgress': 'IN_PROGRESS' },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
