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
import { dispatchInputWrites } from '../store/dispatch/inputs.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import * as Store from '../store/requests-repo.js';
import type { RequestLocation } from '../store/requests-repo.js';
import type { RequestRecord, RequestStatus } from '../model.js';
import { chatFacts, chatNotFound } from './chat-lookup.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import { inputAdded } from './dispatch/seal.js';
import { locationCache } from './locations.js';
import { USER_SENDER_ID } from '../model.js';
import { EVENTS } from '../model/events.js';
import { REQUEST_TYPES, isObject, normalizeConfig, normalizeResolution, requiredText } from './request-config.js';
import type { RequestType, ResolutionPayload } from './request-config.js';

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

  const now = deps.clock().toISOString();
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
  return request;
}

export type StatusFilter = RequestStatus | 'all';

/** GET /chats/{chatId}/requests (§5.5.2): oldest first, no pagination. */
export async function list(chatId: string, status: StatusFilter): Promise<{ data: RequestRecord[] }> {
  // The 404 first (§5.5.1); cached per container (chats are never deleted), the transaction checks it again.
  await chatFacts(chatId);
  return { data: await Store.listRequests(chatId, status === 'all' ? undefined : status) };
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
}

/**
 * PATCH /requests/{requestId} (§5.5.3): any status, no event, no chat change. Answers the
 * request as stored after the write, so a resolve or cancel that landed in between shows.
 */
export async function update(requestId: string, input: RequestUpdate, deadline: Deadline): Promise<RequestRecord> {
  const { title, body, config, trace } = input;
  if ([title, body, config, trace].every((v) => v === undefined)) {
    throw new ValidationError('At least one updatable field is required.');
  }
  const { loc, request } = await find(requestId);
  const changes: Partial<Pick<RequestRecord, 'title' | 'body' | 'config' | 'trace'>> = {};
  if (title !== undefined) changes.title = checkTitle(title);
  if (body !== undefined) changes.body = checkBody(body);
  if (trace !== undefined) changes.trace = checkTrace(trace);
  if (config !== undefined) changes.config = normalizeConfig(request.type, config) as Record<string, unknown>;
  const updated = await Store.updateRequest(loc, changes, deadline);
  if (!updated) throw requestNotFound(requestId);
  return updated;
}

/** POST /requests/{requestId}/resolve (§4.3, §5.5.4). */
export async function resolve(
  config: InstanceConfig,
  requestId: string,
  input: Record<string, unknown>,
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
  const now = deps.clock().toISOString();
  const resolved: RequestRecord = {
    ...request,
    status: 'resolved',
    resolved_at: now,
    resolved_by: resolvedBy,
    resolution_payload: payload as Record<string, unknown>,
  };
  const event = EVENTS.requestResolved.of({
    chatId: loc.chatId,
    requestId,
    type: request.type,
    title: request.title,
    status: 'resolved',
    senderId: resolvedBy,
    resolution_payload: payload,
    resolutionPayload: payload,
    trace: request.trace,
  });
  await withEvents([event], now, (eventItems) =>
    transact(
      [
        guarded(
          Store.endRequest(loc, {
            status: 'resolved',
            resolvedAt: now,
            resolvedBy,
            payload: payload as Record<string, unknown>,
          }),
          (old) => lostRace('resolved', requestId, old),
        ),
        Chats.adjustPending(loc.chatId, -1, now),
        ...dispatchInputWrites({
          id: deps.newId(),
          chat_id: loc.chatId,
          source_kind: 'request_resolved',
          source_id: requestId,
          sender_id: resolvedBy === 'backend' ? 'backend' : USER_SENDER_ID,
          content: resolutionLine(request.type, request.title, payload),
          media_ids: [],
          request_type: request.type,
          request_title: request.title,
          resolution_payload: payload as Record<string, unknown>,
          state: 'pending',
          created_at: now,
        }),
        ...completionInTransaction(keyed, resolved),
        ...eventItems,
      ],
      deadline,
    ),
  );
  // A resolution is a dispatch input (§4.4.1).
  await inputAdded(config, loc.chatId, deadline);
  return resolved;
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
  requestId: string,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  const { loc, request } = await find(requestId);
  if (request.status !== 'pending') throw notPending('cancelled', requestId, request.status);
  const now = deps.clock().toISOString();
  const cancelled: RequestRecord = { ...request, status: 'cancelled' };
  const event = EVENTS.requestCancelled.of({
    chatId: loc.chatId,
    requestId,
    type: request.type,
    status: 'cancelled',
    resolution_payload: null,
    trace: request.trace,
  });
  await withEvents([event], now, (eventItems) =>
    transact(
      [
        guarded(
          Store.endRequest(loc, { status: 'cancelled', resolvedAt: null, resolvedBy: null, payload: null }),
          (old) => lostRace('cancelled', requestId, old),
        ),
        Chats.adjustPending(loc.chatId, -1, now),
        ...completionInTransaction(keyed, cancelled),
        ...eventItems,
      ],
      deadline,
    ),
  );
  return cancelled;
}

/**
 * How a resolution reads in a dispatch batch (§4.4.8), rendered when it happens so the form
 * values keep their submitted key order (a stored map would not).
 */
export function resolutionLine(type: RequestType, title: string, payload: ResolutionPayload): string {
  const head = `[Request resolved: "${title}"]`;
  if ('selectedOptionIds' in payload) return `${head} Selected: ${payload.selectedOptionIds.join(', ')}`;
  if ('text' in payload) return `${head} Response: ${payload.text}`;
  return `${head} Form values: ${JSON.stringify(payload.values)}`;
}

/** Another resolve or cancel ended the request between our read and our write. */
function lostRace(verb: 'resolved' | 'cancelled', requestId: string, old: Record<string, unknown> | undefined): Error {
  const status = old ? (old.status as RequestStatus) : 'resolved';
  return notPending(verb, requestId, status);
}
