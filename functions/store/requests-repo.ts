/**
 * Interactive request storage. A request lives in its chat's partition (CHAT#<chatId>,
 * REQ#<createdMs>#<id>), so a chat's requests are one strongly consistent Query in creation
 * order, and a pointer item (REQ#<id>/PTR) written in the same transaction finds it by id.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { REQUEST_FIELDS, nextTimerMs, pick, reminderAtMs } from '../model.js';
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

/** The request's gsi1/gsi2 keys for GET /requests (Keys.requestListing). */
const listingOf = (request: RequestRecord, closedAt: string | null) =>
  Keys.requestListing({ ...request, deadlineAt: request.deadline?.at ?? null, closedAt });

/** The request's timer mark (gsi3) while it is pending with a deadline: its next timer's time. */
const timerMarkOf = (request: RequestRecord) =>
  request.status === 'pending' && request.deadline
    ? Keys.requestTimerDue(nextTimerMs(request.deadline), request.id)
    : undefined;

export function putRequest(request: RequestRecord): TransactItem[] {
  const key = Keys.request(request.chat_id, request.created_at, request.id);
  return [
    putNew({
      ...key,
      ...request,
      config: storable(request.config),
      resolution_payload: storable(request.resolution_payload),
      trace: storable(request.trace),
      deadline: storable(request.deadline),
      type: 'request',
      request_type: request.type,
      ...listingOf(request, null),
      ...timerMarkOf(request),
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

/** How a closing ends a pending request (resolve, cancel, or its deadline). */
export interface RequestEnd {
  status: 'resolved' | 'cancelled';
  /** When it closed: resolved_at for a resolution, and the closed list's order either way. */
  closedAt: string;
  resolvedBy: 'user' | 'backend' | null;
  payload: Record<string, unknown> | null;
  /** For an expiry: the deadline's `at` it closes on, which the request must still have. */
  expiredOn?: string;
}

/**
 * Ends a pending request, conditioned on it still being pending (and, for an expiry, on its
 * deadline being the one that fell due); a failed condition returns the item as it is (the
 * caller reports its status). The request moves to its closed list (gsi1/gsi2), and its timer
 * mark (gsi3) goes.
 */
export function endRequest(loc: RequestLocation, request: RequestRecord, end: RequestEnd): TransactItem {
  const closed = { ...request, status: end.status };
  return {
    Update: {
      TableName: tableName(),
      Key: requestKey(loc),
      UpdateExpression:
        'SET #status = :status, resolved_at = :at, resolved_by = :by, resolution_payload = :payload, ' +
        'expired_at = :expired, closed_at = :closed, gsi1pk = :g1pk, gsi1sk = :g1sk REMOVE gsi3pk, gsi3sk',
      ConditionExpression: end.expiredOn ? '#status = :pending AND #deadline.#dat = :due' : '#status = :pending',
      ExpressionAttributeNames: {
        '#status': 'status',
        ...(end.expiredOn ? { '#deadline': 'deadline', '#dat': 'at' } : {}),
      },
      ExpressionAttributeValues: {
        ':status': end.status,
        ':at': end.status === 'resolved' ? end.closedAt : null,
        ':by': end.resolvedBy,
        ':payload': storable(end.payload),
        ':expired': end.expiredOn ? end.closedAt : null,
        ':closed': end.closedAt,
        ':g1pk': listingOf(closed, end.closedAt).gsi1pk,
        ':g1sk': listingOf(closed, end.closedAt).gsi1sk,
        ':pending': 'pending',
        ...(end.expiredOn ? { ':due': end.expiredOn } : {}),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The fields a PATCH may change (§5.5.3, and the deadline of §5.5.6). */
export type RequestChanges = Partial<Pick<RequestRecord, 'title' | 'body' | 'config' | 'trace' | 'deadline'>>;

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
  request: RequestRecord,
  changes: RequestChanges,
  deadline: Deadline,
): Promise<{ updated: RequestRecord } | { notPending: RequestRecord } | undefined> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(changes).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = storable(value);
    return `#${field} = :${field}`;
  });
  const movesDeadline = changes.deadline !== undefined;
  let removes = '';
  if (movesDeadline) {
    // A deadline is set or changed only while pending (§5.5.6): its place in the pending list
    // and its timer mark move with it, and the reminders sent for the old one count no more.
    const moved: RequestRecord = { ...request, status: 'pending', deadline: changes.deadline ?? null };
    sets.push('gsi1sk = :g1sk');
    values[':g1sk'] = listingOf(moved, null).gsi1sk;
    values[':pending'] = 'pending';
    names['#status'] = 'status';
    const mark = timerMarkOf(moved);
    if (mark) {
      sets.push('gsi3pk = :g3pk', 'gsi3sk = :g3sk');
      values[':g3pk'] = mark.gsi3pk;
      values[':g3sk'] = mark.gsi3sk;
      removes = ' REMOVE reminders_sent';
    } else {
      removes = ' REMOVE reminders_sent, gsi3pk, gsi3sk';
    }
  }
  const updated = await retryConflicts(deadline, () =>
    updateIf({
      Key: requestKey(loc),
      UpdateExpression: `SET ${sets.join(', ')}${removes}`,
      ConditionExpression: movesDeadline ? 'attribute_exists(pk) AND #status = :pending' : 'attribute_exists(pk)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }),
  );
  if (updated.ok) return updated.item ? { updated: fromItem(updated.item) } : undefined;
  return updated.old ? { notPending: fromItem(updated.old) } : undefined;
}

/**
 * A reminder's mark, in the transaction of its event: conditioned on the request still pending
 * with the same deadline and this reminder not yet sent, so it is sent once, never for a
 * deadline that moved or a request that closed; and on its timer mark not being past this
 * reminder (a later one was sent: this one is past news, as when the sweep sent only the latest).
 * The timer mark moves on to the next timer.
 */
export function markReminded(loc: RequestLocation, request: RequestRecord, before: number): TransactItem {
  const deadline = request.deadline!;
  const mine = Keys.requestTimerDue(reminderAtMs(deadline, before), request.id);
  const next = Keys.requestTimerDue(nextTimerMs(deadline, before), request.id);
  return {
    Update: {
      TableName: tableName(),
      Key: requestKey(loc),
      UpdateExpression: 'SET gsi3pk = :g3pk, gsi3sk = :g3sk ADD reminders_sent :sent',
      ConditionExpression:
        '#status = :pending AND #deadline.#dat = :at AND (attribute_not_exists(reminders_sent) OR NOT ' +
        'contains(reminders_sent, :before)) AND (attribute_not_exists(gsi3sk) OR gsi3sk <= :mine)',
      ExpressionAttributeNames: { '#status': 'status', '#deadline': 'deadline', '#dat': 'at' },
      ExpressionAttributeValues: {
        ':sent': new Set([before]),
        ':pending': 'pending',
        ':at': deadline.at,
        ':before': before,
        ':g3pk': next.gsi3pk,
        ':g3sk': next.gsi3sk,
        ':mine': mine.gsi3sk,
      },
    },
  };
}

/** The reminders already sent for a request's current deadline (offsets). */
export async function remindersSent(loc: RequestLocation): Promise<Set<number>> {
  const out = await ddb().send(
    new GetCommand({
      TableName: tableName(),
      Key: requestKey(loc),
      ProjectionExpression: 'reminders_sent',
      ConsistentRead: true,
    }),
  );
  const sent = out.Item?.reminders_sent as Set<number> | undefined;
  return new Set(sent ? [...sent].map(Number) : []);
}

/** Where a stored request item is (its chat partition and sort key). */
const locationOf = (item: Record<string, unknown>): RequestLocation => ({
  chatId: Keys.chatIdOf(String(item.pk)),
  sk: String(item.sk),
});

/**
 * One page of every chat's requests (§5.5.6 GET /requests) in the list's order: one Query of
 * limit+1 items on gsi1 (a status) or gsi2 (all), resumed after `after` (a listed item's keys).
 */
export async function queryAllRequests(
  status: 'pending' | 'resolved' | 'cancelled' | 'all',
  limit: number,
  after: Record<string, string> | undefined,
): Promise<{ requests: RequestRecord[]; last: Record<string, string> | undefined }> {
  const { index, pkName, pk } = Keys.requestsIndex(status);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: index,
      KeyConditionExpression: `${pkName} = :pk`,
      ExpressionAttributeValues: { ':pk': pk },
      Limit: limit + 1,
      ...(after ? { ExclusiveStartKey: { ...after, [pkName]: pk } } : {}),
    }),
  );
  const items = out.Items ?? [];
  const page = items.slice(0, limit);
  const lastItem = items.length > limit ? page[page.length - 1] : undefined;
  return {
    requests: page.map(fromItem),
    last: lastItem ? { pk: String(lastItem.pk), sk: String(lastItem.sk), gsi1sk: String(lastItem.gsi1sk) } : undefined,
  };
}

/**
 * Where the pending requests are whose next timer (Keys.requestTimerDue) fell due at or before
 * `ms`, most overdue first, at most `limit` of them: one Query of the sparse gsi3 (its projection
 * holds the keys), empty when nothing is overdue.
 */
export async function requestsWithTimersDueBy(ms: number, limit: number): Promise<RequestLocation[]> {
  const range = Keys.requestTimersDueBy(ms);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi3',
      KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': range.pk, ':from': range.from, ':to': range.to },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(locationOf);
}

/** Every pending request with a deadline, soonest first (the local runtime arms their timers at start). */
export async function requestsWithDeadlines(): Promise<{ loc: RequestLocation; request: RequestRecord }[]> {
  const range = Keys.requestsWithDeadlines;
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': range.pk, ':from': range.from, ':to': range.to },
  });
  return items.map((item) => ({ loc: locationOf(item), request: fromItem(item) }));
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
