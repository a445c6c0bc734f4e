/**
 * Interactive request storage. A request lives in its chat's partition (CHAT#<chatId>,
 * REQ#<createdMs>#<id>), so a chat's requests are one strongly consistent Query in creation
 * order, and a pointer item (REQ#<id>/PTR) written in the same transaction finds it by id.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { REQUEST_FIELDS, pick } from '../model.js';
import type { RequestRecord, RequestStatus } from '../model.js';
import type { Deadline } from '../platform/deadline.js';
import { ddb, putNew, queryAll, retryConflicts, tableName, updateIf } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';
import { storable } from './storable.js';

/** The stored item holds exactly the API fields (§2.3): model.ts declares them. */

export interface RequestLocation {
  chatId: string;
  sk: string;
}

const requestKey = (loc: RequestLocation) => ({ pk: Keys.chat(loc.chatId).pk, sk: loc.sk });

export function putRequest(request: RequestRecord): TransactItem[] {
  const key = Keys.request(request.chat_id, request.created_at, request.id);
  return [
    putNew({
      ...key,
      ...request,
      config: storable(request.config),
      resolution_payload: storable(request.resolution_payload),
      trace: storable(request.trace),
      type: 'request',
      request_type: request.type,
    }),
    putNew({
      ...Keys.requestPointer(request.id),
      type: 'request-pointer',
      chat_id: request.chat_id,
      request_sk: key.sk,
    }),
  ];
}

export async function locate(requestId: string): Promise<RequestLocation | undefined> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.requestPointer(requestId), ConsistentRead: true }),
  );
  return out.Item ? { chatId: String(out.Item.chat_id), sk: String(out.Item.request_sk) } : undefined;
}

export async function getRequest(loc: RequestLocation): Promise<RequestRecord | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: requestKey(loc), ConsistentRead: true }));
  return out.Item ? fromItem(out.Item) : undefined;
}

/** The item stores the request type as `request_type` too: `type` is the item kind elsewhere. */
function fromItem(item: Record<string, unknown>): RequestRecord {
  return pick<RequestRecord>({ ...item, type: item.request_type }, REQUEST_FIELDS);
}

/**
 * Ends a pending request (resolve or cancel), conditioned on it still being pending; a
 * failed condition returns the item as it is (the caller reports its status).
 */
export function endRequest(
  loc: RequestLocation,
  end: {
    status: 'resolved' | 'cancelled';
    resolvedAt: string | null;
    resolvedBy: string | null;
    payload: Record<string, unknown> | null;
  },
): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: requestKey(loc),
      UpdateExpression: 'SET #status = :status, resolved_at = :at, resolved_by = :by, resolution_payload = :payload',
      ConditionExpression: '#status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':status': end.status,
        ':at': end.resolvedAt,
        ':by': end.resolvedBy,
        ':payload': storable(end.payload),
        ':pending': 'pending',
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * PATCH: replaces the given fields (status untouched, any status) with one conditional
 * UpdateItem: 1 WCU per KB of the item, where a one-item TransactWriteItems costs 2. Nothing
 * else is written with it (§5.5.3: no event, no chat change), so there is no atomicity to
 * keep. The condition only refuses to create an item that is not there (UpdateItem would
 * otherwise upsert one from the key): `undefined` then, which the caller answers 404.
 * Returns the request as stored after the update, so a concurrent resolve or cancel that
 * committed first shows in the answer.
 */
export async function updateRequest(
  loc: RequestLocation,
  changes: Partial<Pick<RequestRecord, 'title' | 'body' | 'config' | 'trace'>>,
  deadline: Deadline,
): Promise<RequestRecord | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(changes).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = storable(value);
    return `#${field} = :${field}`;
  });
  const updated = await retryConflicts(deadline, () =>
    updateIf({
      Key: requestKey(loc),
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return updated.ok && updated.item ? fromItem(updated.item) : undefined;
}

/**
 * A chat's requests, oldest first, optionally of one status. Unpaginated by contract (§5.5.2),
 * so it reads the chat's whole request range; the status filter is applied after reading.
 */
export async function listRequests(chatId: string, status: RequestStatus | undefined): Promise<RequestRecord[]> {
  const { pk, skPrefix } = Keys.requestsOf(chatId);
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix, ...(status ? { ':status': status } : {}) },
    ...(status ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } } : {}),
    ConsistentRead: true,
  });
  return items.map(fromItem);
}
