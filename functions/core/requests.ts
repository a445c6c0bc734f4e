/**
 * Interactive requests (contract §2.3, §4.3, §5.5). Every state change writes the request,
 * the chat's pending count, the event and (for a resolution) the dispatch input in one
 * transaction; resolve and cancel are conditioned on the request still being pending, so of
 * two concurrent resolutions exactly one wins. PATCH changes the request item alone (no event,
 * no chat change), so it is one conditional UpdateItem rather than a transaction.
 *
 * Web push on request creation (§7.3) is not sent from here: the `request.created` event item
 * written in the create transaction is the seam, consumed from the table's stream by the
 * notifier (ARCHITECTURE.md, web push), so a push never goes out for a request that did not commit.
 */
import { FieldRuleError, NotFoundError, ValidationError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import * as Store from '../store/requests-repo.js';
import type { RequestChanges, RequestLocation } from '../store/requests-repo.js';
import type { DecisionActor, RequestRecord, RequestStatus } from '../model.js';
import { armRequestTimers, withdrawRequestTimers } from '../platform/request-timer.js';
import { closeRequest } from './request-closing.js';
import { decodeCursor, encodeCursor, invalidCursor } from '../store/cursor.js';
import type { Page } from './chat-reads.js';
import { parseDeadline, recheckDefault, timersOf } from './request-deadline.js';
import { chatFacts, chatNotFound } from './chat-lookup.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import { inputAdded } from './dispatch/seal.js';
import { locationCache } from './locations.js';
import { EVENTS } from '../model/events.js';
import { REQUEST_TYPES, isObject, normalizeConfig, normalizeResolution, requiredText } from './request-config.js';
import type { RequestConfig, RequestType } from './request-config.js';

export const requestNotFound = (requestId: string) => NotFoundError.of('requestId', requestId, 'Request not found.');

const notPending = (verb: 'resolved' | 'cancelled', requestId: string, status: RequestStatus) =>
  new ValidationError(`Only pending requests can be ${verb}.`, { requestId, status });

/** The create body as received: every field is checked by the rules below, after the chat (§5.5.1). */
export interface NewRequest {
  type?: unknown;
  title?: unknown;
  body?: unknown;
  config?: unknown;
  trace?: unknown;
  deadline?: unknown;
}

const checkTitle = (title: unknown): string => requiredText(title, 'title');

function checkBody(body: unknown): string | null {
  if (body === undefined || body === null) return null;
  if (typeof body !== 'string') throw new FieldRuleError('body', 'body must be a string or null.');
  return body;
}

function checkTrace(trace: unknown): Record<string, unknown> {
  if (!isObject(trace)) throw new FieldRuleError('trace', 'trace must be a JSON object.');
  return trace;
}

/** POST /chats/{chatId}/requests (§5.5.1): the chat first, then the rules in the contract's order. */
export async function create(
  chatId: string,
  input: NewRequest,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  // The 404 first (§5.5.1); cached per container (chats are never deleted), the transaction checks it again.
  await chatFacts(chatId);
  if (!REQUEST_TYPES.includes(input.type as RequestType)) {
    throw new FieldRuleError('type', 'type must be one of choice, text_input, form.');
  }
  const type = input.type as RequestType;
  const title = checkTitle(input.title);
  const body = checkBody(input.body);
  const trace = input.trace === undefined ? null : checkTrace(input.trace);
  const config = normalizeConfig(type, input.config);
  const nowMs = deps.clock().getTime();
  const requestDeadline = parseDeadline(input.deadline, type, config, nowMs) ?? null;

  const now = new Date(nowMs).toISOString();
  const request: RequestRecord = {
    id: deps.newId(),
    chat_id: chatId,
    type,
    status: 'pending',
    title,
    body,
    config: config as Record<string, unknown>,
    created_at: now,
    resolved_at: null,
    resolved_by: null,
    resolution_payload: null,
    trace,
    deadline: requestDeadline,
    expired_at: null,
  };
  const puts = Store.putRequest(request);
  await withEvents([EVENTS.requestCreated.of({ chatId, requestId: request.id, type, title })], now, (eventItems) =>
    // The chat's update is conditioned on the chat existing.
    transact(
      [
        ...puts,
        guarded(Chats.adjustPending(chatId, 1, now), () => chatNotFound(chatId)),
        // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
        ...completionInTransaction(keyed, request),
        ...eventItems,
      ],
      deadline,
    ),
  );
  await armRequestTimers(timersOf(request));
  return request;
}

export type StatusFilter = RequestStatus | 'all';

/** GET /chats/{chatId}/requests (§5.5.2): oldest first, no pagination. */
export async function list(chatId: string, status: StatusFilter): Promise<{ data: RequestRecord[] }> {
  // The 404 first (§5.5.1); cached per container (chats are never deleted), the transaction checks it again.
  await chatFacts(chatId);
  return { data: await Store.listRequests(chatId, status === 'all' ? undefined : status) };
}

/**
 * GET /requests (§5.5.6): one page of every chat's requests in the list's order, one Query of
 * gsi1 (a status) or gsi2 (all); the cursor holds the last item's keys, signed for its list.
 */
export async function listAll(
  status: StatusFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<RequestRecord>> {
  const listName = `requests:${status}`;
  let after: Record<string, string> | undefined;
  if (cursor !== undefined) {
    const position = await decodeCursor(listName, cursor);
    const { pk, sk, s } = position;
    if (typeof pk !== 'string' || typeof sk !== 'string' || typeof s !== 'string') throw invalidCursor();
    after = { pk, sk, gsi1sk: s };
  }
  const { requests, last } = await Store.queryAllRequests(status, limit, after);
  const next = last ? await encodeCursor(listName, { pk: last.pk!, sk: last.sk!, s: last.gsi1sk! }) : null;
  return { data: requests, cursor: { next, hasMore: next !== null } };
}

const locate = locationCache(Store.locate, requestNotFound);

async function find(requestId: string): Promise<{ loc: RequestLocation; request: RequestRecord }> {
  const loc = await locate(requestId);
  const request = await Store.getRequest(loc);
  if (!request) throw requestNotFound(requestId);
  return { loc, request };
}

export interface RequestUpdate {
  title?: unknown;
  body?: unknown;
  config?: unknown;
  trace?: unknown;
  deadline?: unknown;
}

/**
 * PATCH /requests/{requestId} (§5.5.3): any status, no event, no chat change. Answers the
 * request as stored after the write, so a resolve or cancel that landed in between shows. A
 * deadline (§5.5.6) may be set, changed or removed only while the request is pending; its default
 * is checked against the config the request will have.
 */
export async function update(
  requestId: string,
  input: RequestUpdate,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  const { title, body, config, trace } = input;
  if ([title, body, config, trace, input.deadline].every((v) => v === undefined)) {
    throw new ValidationError('At least one updatable field is required.');
  }
  const { loc, request } = await find(requestId);
  const changes: RequestChanges = {};
  if (title !== undefined) changes.title = checkTitle(title);
  if (body !== undefined) changes.body = checkBody(body);
  if (trace !== undefined) changes.trace = checkTrace(trace);
  if (config !== undefined) changes.config = normalizeConfig(request.type, config) as Record<string, unknown>;
  const newConfig = (changes.config ?? request.config) as RequestConfig;
  if (input.deadline !== undefined) {
    if (request.status !== 'pending') throw cannotTakeDeadline(requestId, request.status);
    changes.deadline = parseDeadline(input.deadline, request.type, newConfig, deps.clock().getTime()) ?? null;
  } else if (changes.config) {
    recheckDefault(request.deadline, request.type, newConfig);
  }
  const outcome = await Store.updateRequest(loc, request, changes, deadline);
  if (!outcome) throw requestNotFound(requestId);
  if ('notPending' in outcome) throw cannotTakeDeadline(requestId, outcome.notPending.status);
  const updated = outcome.updated;
  if (changes.deadline !== undefined) {
    withdrawRequestTimers(requestId);
    await armRequestTimers(timersOf(updated));
  }
  return updated;
}

const cannotTakeDeadline = (requestId: string, status: RequestStatus) =>
  new ValidationError('Only pending requests can take a deadline.', { requestId, status });

/** POST /requests/{requestId}/resolve (§4.3, §5.5.4). */
export async function resolve(
  config: InstanceConfig,
  requestId: string,
  input: Record<string, unknown>,
  actor: DecisionActor,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  const { loc, request } = await find(requestId);
  if (request.status !== 'pending') throw notPending('resolved', requestId, request.status);
  const payload = normalizeResolution(request.type, request.config as never, input);
  // Absent means `user`; present, it must be one of the two (null included, §5.5.4 check 4).
  const resolvedBy = input.resolvedBy === undefined ? 'user' : input.resolvedBy;
  if (resolvedBy !== 'user' && resolvedBy !== 'backend') {
    throw new FieldRuleError('resolvedBy', 'resolvedBy must be one of user, backend.');
  }
  return closeRequest(
    config,
    loc,
    request,
    { status: 'resolved', resolvedBy, payload, actor },
    (old) => lostRace('resolved', requestId, old),
    deadline,
    keyed,
    deps,
  );
}

/**
 * The resolution's dispatch signal, redone for a replayed resolve (http() afterReplay): a crash
 * between the commit and the signal would have skipped it; a second signal finds nothing left
 * to seal. Never throws.
 */
export async function redoAfterResolve(
  config: InstanceConfig,
  resolved: RequestRecord,
  deadline: Deadline,
): Promise<void> {
  await inputAdded(config, resolved.chat_id, deadline);
}

/** POST /requests/{requestId}/cancel (§4.3, §5.5.5). */
export async function cancel(
  config: InstanceConfig,
  requestId: string,
  actor: DecisionActor,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  const { loc, request } = await find(requestId);
  if (request.status !== 'pending') throw notPending('cancelled', requestId, request.status);
  return closeRequest(
    config,
    loc,
    request,
    { status: 'cancelled', resolvedBy: null, payload: null, actor },
    (old) => lostRace('cancelled', requestId, old),
    deadline,
    keyed,
    deps,
  );
}

/** Another resolve or cancel (or the deadline) ended the request between our read and our write. */
function lostRace(verb: 'resolved' | 'cancelled', requestId: string, old: Record<string, unknown> | undefined): Error {
  const status = old ? (old.status as RequestStatus) : 'resolved';
  return notPending(verb, requestId, status);
}
