/**
 * Closing a pending request (contract §4.3, §5.5.4, §5.5.5, §5.5.6): by a client's resolve or
 * cancel, or by its deadline. One transaction writes the request's end (conditioned on it still
 * being pending, and for an expiry on its deadline still being the one that fell due), the chat's
 * pending count, the event, the dispatch input of a resolution, the keyed reply, and the decision
 * log's entry; so of a person's answer and the deadline racing, exactly one closes the request,
 * with one event and one entry.
 */
import type { DecisionActor, RequestRecord } from '../model.js';
import { USER_SENDER_ID } from '../model.js';
import { EVENTS } from '../model/events.js';
import type { Deadline } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { withdrawRequestTimers } from '../platform/request-timer.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import { dispatchInputWrites } from '../store/dispatch/inputs.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import * as Store from '../store/requests-repo.js';
import type { RequestLocation } from '../store/requests-repo.js';
import { withDecision } from './decisions.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import { inputAdded } from './dispatch/seal.js';
import type { RequestType, ResolutionPayload } from './request-config.js';

export interface Closing {
  status: 'resolved' | 'cancelled';
  /** For a resolution: who resolved it, and the normalized payload. */
  resolvedBy: 'user' | 'backend' | null;
  payload: ResolutionPayload | null;
  /** Who closed it, for the decision log. */
  actor: DecisionActor;
  /** For an expiry: the deadline's `at` it closes on. */
  expiredOn?: string;
}

/**
 * Closes `request` (read at `loc`, pending when read). `lost` answers a failed condition (another
 * closing, or a deadline change, came first) with the error to throw, given the item as it is.
 */
export async function closeRequest(
  config: InstanceConfig,
  loc: RequestLocation,
  request: RequestRecord,
  closing: Closing,
  lost: (old: Record<string, unknown> | undefined) => Error,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<RequestRecord> {
  const now = deps.clock().toISOString();
  const expired = closing.expiredOn !== undefined;
  const resolved = closing.status === 'resolved';
  const payload = closing.payload as Record<string, unknown> | null;
  const closed: RequestRecord = {
    ...request,
    status: closing.status,
    resolved_at: resolved ? now : null,
    resolved_by: closing.resolvedBy,
    resolution_payload: payload,
    expired_at: expired ? now : null,
  };
  const reason = expired ? { reason: 'deadline' as const } : {};
  const event = resolved
    ? EVENTS.requestResolved.of({
        chatId: loc.chatId,
        requestId: request.id,
        type: request.type,
        title: request.title,
        status: 'resolved',
        senderId: closing.resolvedBy ?? 'user',
        resolution_payload: payload ?? {},
        resolutionPayload: payload ?? {},
        trace: request.trace,
        ...reason,
      })
    : EVENTS.requestCancelled.of({
        chatId: loc.chatId,
        requestId: request.id,
        type: request.type,
        status: 'cancelled',
        resolution_payload: null,
        trace: request.trace,
        ...reason,
      });
  const decision = {
    at: now,
    chat_id: loc.chatId,
    request_id: request.id,
    type: request.type,
    title: request.title,
    action: expired ? ('expired' as const) : closing.status,
    actor: closing.actor,
    resolved_by: closing.resolvedBy,
    payload,
  };
  await withEvents([event], now, (eventItems) =>
    withDecision(decision, deadline, (decisionItems) =>
      transact(
        [
          guarded(
            Store.endRequest(loc, request, {
              status: closing.status,
              closedAt: now,
              resolvedBy: closing.resolvedBy,
              payload,
              expiredOn: closing.expiredOn,
            }),
            lost,
          ),
          Chats.adjustPending(loc.chatId, -1, now),
          ...(resolved ? resolutionInput(loc.chatId, request, closing, now, deps) : []),
          ...completionInTransaction(keyed, closed),
          ...eventItems,
          ...decisionItems,
        ],
        deadline,
      ),
    ),
  );
  if (request.deadline) withdrawRequestTimers(request.id);
  // A resolution is a dispatch input (§4.4.1).
  if (resolved) await inputAdded(config, loc.chatId, deadline);
  return closed;
}

/** The resolution's dispatch input (§4.4.1). */
function resolutionInput(chatId: string, request: RequestRecord, closing: Closing, now: string, deps: Deps) {
  const payload = closing.payload!;
  return dispatchInputWrites({
    id: deps.newId(),
    chat_id: chatId,
    source_kind: 'request_resolved',
    source_id: request.id,
    sender_id: closing.resolvedBy === 'backend' ? 'backend' : USER_SENDER_ID,
    content: resolutionLine(request.type, request.title, payload),
    media_ids: [],
    request_type: request.type,
    request_title: request.title,
    resolution_payload: payload as Record<string, unknown>,
    state: 'pending',
    created_at: now,
  });
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
