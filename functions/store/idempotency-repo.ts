/**
 * Idempotency records (contract §1.10). One item per key (stored as a SHA-256 of the key):
 * IN_PROGRESS while the first request runs (with a lock that lapses if its function dies),
 * then COMPLETED with the 2xx status and body until `expiresAt`. DynamoDB's TTL removes
 * old items eventually; `expiresAt` makes an expired record count as absent right away.
 *
 * Each reservation carries an `owner` token. The writes that end it (completion, release) are
 * conditioned on it, so a request whose lock lapsed cannot complete or release a key that a
 * retry has taken over meanwhile. Where the route allows, the completion is written inside the
 * business transaction itself (completionInTransaction), so the effect and the stored reply
 * commit together: a crash between them cannot make a retry execute twice. That reply reaches
 * the service as an argument (KeyedReply): the idempotency middleware holds the key, the handler
 * wrapper (middleware/http.ts) hands it to the handler as `keyed`, the handler to its service.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConflictError } from '../errors.js';
import { ddb, deleteIf, putIf, tableName } from './db.js';
import type { GuardedItem, TransactItem } from './db.js';
import { Keys } from './keys.js';

export interface StoredReply {
  statusCode: number;
  /** The JSON body as sent ('' for a 204). */
  body: string;
}

/** The Idempotency-Key a request holds (middleware/idempotency.ts reserved it). */
export interface HeldKey {
  /** The key as the client sent it (trimmed): for the 409 details. */
  key: string;
  keyHash: string;
  fingerprint: string;
  /** Our reservation's token: a write conditioned on it fails if the key lapsed and another request took it. */
  owner: string;
  ttlSeconds: number;
  /** The reply a committed business transaction stored with the key. */
  committed?: StoredReply;
}

/**
 * A held key and how the service's result becomes the request's reply: what a service passes to
 * completionInTransaction. Given to the handler (`keyed`) only when the request holds a key and
 * its route declares its committed reply (middleware/http.ts `committedReply`).
 */
export interface KeyedReply {
  held: HeldKey;
  replyOf: (result: unknown) => StoredReply;
}

/** Bodies above this are not stored (an item holds 400 KB); the key is released instead. */
export const MAX_STORED_BODY = 350_000;

export interface IdempotencyRecord {
  fingerprint: string;
  owner?: string;
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

export async function reserve(
  keyHash: string,
  fingerprint: string,
  owner: string,
  now: number,
  lockMs: number,
): Promise<Reservation> {
  const out = await putIf({
    Item: {
      ...Keys.idempotency(keyHash),
      type: 'idempotency',
      status: 'IN_PROGRESS',
      fingerprint,
      owner,
      lockExpiresAt: now + lockMs,
      ttl: Math.ceil((now + lockMs) / 1000) + 3600,
    },
    ConditionExpression:
      'attribute_not_exists(pk) OR (#status = :completed AND expiresAt <= :now) OR (#status = :inProgress AND ' +
      'lockExpiresAt <= :now)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':completed': 'COMPLETED', ':inProgress': 'IN_PROGRESS', ':now': now },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (out.ok) return { reserved: true };
  // The condition can fail only on a record that exists, which ALL_OLD returns.
  if (!out.old) throw new Error(`Idempotency reservation refused without a record (${keyHash})`);
  return { reserved: false, existing: out.old as unknown as IdempotencyRecord };
}

export async function read(keyHash: string): Promise<IdempotencyRecord | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.idempotency(keyHash), ConsistentRead: true }),
  );
  return out.Item as IdempotencyRecord | undefined;
}

/**
 * The update that stores our reservation's reply, lasting `ttlSeconds` from now. `inProgressOnly`:
 * only while the key is still in progress (inside the business transaction); otherwise also over
 * a reply of ours stored earlier (after the handler, when the reply differs from it).
 */
function completionUpdate(
  held: Pick<HeldKey, 'keyHash' | 'owner'>,
  reply: StoredReply,
  now: number,
  ttlSeconds: number,
  inProgressOnly: boolean,
): TransactItem {
  const expiresAt = now + ttlSeconds * 1000;
  return {
    Update: {
      TableName: tableName(),
      Key: Keys.idempotency(held.keyHash),
      UpdateExpression:
        'SET #status = :completed, statusCode = :code, body = :body, expiresAt = :expiresAt, #ttl = :ttl REMOVE ' +
        'lockExpiresAt',
      ConditionExpression: inProgressOnly ? '#owner = :owner AND #status = :inProgress' : '#owner = :owner',
      ExpressionAttributeNames: {
        '#status': 'status',
        '#ttl': 'ttl',
        '#owner': 'owner',
      },
      ExpressionAttributeValues: {
        ':completed': 'COMPLETED',
        ...(inProgressOnly ? { ':inProgress': 'IN_PROGRESS' } : {}),
        ':code': reply.statusCode,
        ':body': reply.body,
        ':expiresAt': expiresAt,
        ':ttl': Math.ceil(expiresAt / 1000),
        ':owner': held.owner,
      },
    },
  };
}

/** Stores the reply of our own reservation (after the handler); lasts `ttlSeconds` from now. */
export async function complete(
  held: Pick<HeldKey, 'keyHash' | 'owner'>,
  reply: StoredReply,
  now: number,
  ttlSeconds: number,
): Promise<void> {
  const { Update } = completionUpdate(held, reply, now, ttlSeconds, false);
  await ddb().send(new UpdateCommand(Update as never));
}

export const inProgressConflict = (key: string): ConflictError =>
  new ConflictError('Idempotency request is already in progress. Retry shortly.', { field: 'Idempotency-Key', key });

/**
 * For the business transaction of a request that holds an Idempotency-Key: the completion of
 * the key with the reply `result` becomes, so the effect and its stored reply commit together
 * (issue 17 finding 6). Empty without `keyed` (no key held, or the route does not say how a
 * result becomes its reply), when a transaction already stored it, or when the reply is too
 * large to store. If the key lapsed and another request took it, the condition fails and the
 * whole transaction with it: the answer is the in-progress 409 and nothing is written.
 */
export function completionInTransaction(keyed: KeyedReply | undefined, result: unknown): GuardedItem[] {
  if (!keyed || keyed.held.committed) return [];
  const { held } = keyed;
  const reply = keyed.replyOf(result);
  if (reply.statusCode < 200 || reply.statusCode >= 300 || reply.body.length > MAX_STORED_BODY) return [];
  return [
    {
      item: completionUpdate(held, reply, Date.now(), held.ttlSeconds, true),
      onConditionFailed: () => inProgressConflict(held.key),
      onCommitted: () => {
        held.committed = reply;
      },
    },
  ];
}

/** Whether this request's reply will be stored by its business transaction (completionInTransaction). */
export function replyStoredInTransaction(keyed: KeyedReply | undefined): boolean {
  return Boolean(keyed && !keyed.held.committed);
}

/** Releases our own in-progress reservation so a retry executes again. */
export async function release(held: Pick<HeldKey, 'keyHash' | 'owner'>): Promise<void> {
  // Not ours any more (completed, lapsed and taken by another request, or gone): nothing to release.
  await deleteIf({
    Key: Keys.idempotency(held.keyHash),
    ConditionExpression: '#owner = :owner AND #status = :inProgress',
    ExpressionAttributeNames: { '#status': 'status', '#owner': 'owner' },
    ExpressionAttributeValues: { ':owner': held.owner, ':inProgress': 'IN_PROGRESS' },
  });
}
