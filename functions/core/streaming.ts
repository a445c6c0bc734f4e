/**
 * The streaming lifecycle of a message (contract §4.2, §5.4.3–5.4.6): chunks, complete,
 * cancel, cancel-all and the idle timeout, beside stream-text.ts (the assembled text); the
 * message rules it shares with messages.ts (size cap, 404, overdue streams) are in
 * message-rules.ts.
 *
 * Storage and cost (see store/messages-repo.ts):
 * - chunk: one conditional UpdateItem that numbers the chunk and moves the message's
 *   updated_at, then side by side a conditional PutItem of the chunk and a PutItem of its
 *   ephemeral event (see appendChunk). All are the same size at chunk 1 and chunk 2,000;
 *   the text for the response comes from the instance cache (stream-text.ts), and is a prefix
 *   of the final text (appendChunk);
 * - complete / cancel / timeout: the assembled text is written into the message item once.
 */
import { ConflictError, NotFoundError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import { NO_DEADLINE } from '../platform/deadline.js';
import { isId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, retryConflicts, transact } from '../store/db.js';
import { putEphemeralEvent, withEventNumbers } from '../store/events-repo.js';
import { completionInTransaction, replyStoredInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import type { EventReservation } from '../store/events-repo.js';
import * as Store from '../store/messages-repo.js';
import type { MessageLocation, MessageRecord } from '../store/messages-repo.js';
import * as Queries from '../store/message-queries-repo.js';
import { chatFacts, chatNotFound, existingChat, rememberChatFacts } from './chat-lookup.js';
import { commitTouchingChat } from './chat-activity.js';
import { locationCache } from './locations.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import {
  MAX_CONTENT_BYTES,
  idleLimitMs,
  isOverdue,
  messageNotFound,
  notStreaming,
  timedOutAt,
  tooLong,
} from './message-rules.js';
import { previewOf } from '../model.js';
import type { Message } from '../model.js';
import { EVENTS } from '../model/events.js';
import * as StreamText from './stream-text.js';

const locate = locationCache(Store.locate, messageNotFound);

/**
 * Finds a message by id. With `chatId` (the seed's chat-scoped paths), the chat must exist
 * (its 404 first) and own the message (§5.4.5). A message found in that chat proves the chat
 * exists (a message is created only in an existing chat, and chats are never deleted), so the
 * chat is read only when the message is not there: a warm instance reads nothing.
 */
async function find(messageId: string, chatId?: string): Promise<MessageLocation> {
  if (chatId === undefined) return locate(messageId);
  let loc: MessageLocation | undefined;
  try {
    loc = await locate(messageId);
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
  }
  if (loc?.chatId === chatId) return loc;
  await existingChat(chatId);
  throw messageNotFound(messageId);
}

/**
 * POST …/messages/{messageId}/chunks (§5.4.3). Two sequential round trips on a warm instance:
 * 1. the chunk number (a conditional UpdateItem on the message: streaming, not overdue,
 *    within the size cap), which also sets the message's updated_at to the chunk's time;
 * 2. side by side: the chunk item (a conditional PutItem that fails if the number was voided)
 *    and its ephemeral event (a PutItem).
 * The chat's updated_at (§5.4.3: set to now) is not written: the chat lists the message among
 * its open streams, and readers show the chat's updated_at as the latest of its own and its
 * streaming messages' (core/chat-reads.ts withStreamActivity), so the chat and its two ALL index
 * copies (3 WRU) are not rewritten per chunk. On AWS terms a warm chunk is 3.25 WRU: the
 * numbering 1, the chunk 1, the event 1, the leased rate-limit counter ~0.25.
 * The answer is 200 only once the chunk item is stored. No transaction: the chunk is the only
 * item whose write decides the outcome; the event is best-effort by contract (§6.1), so it is
 * not rolled back with it. A failed event after a stored chunk is logged, not answered as an
 * error (a retry would append the chunk twice).
 * A chunk answered 409 because its number was voided (only possible when the chunk write came
 * more than about 1.4 s after its numbering, see finish) may have had its ephemeral event
 * delivered to open streams; the final text, complete's event and every read exclude it.
 */
export async function appendChunk(
  config: InstanceConfig,
  messageId: string,
  deltaText: string,
  chatId: string | undefined,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<Message> {
  const loc = await find(messageId, chatId);
  const now = deps.clock();
  const nowIso = now.toISOString();
  const bytes = Buffer.byteLength(deltaText, 'utf8');
  const reserved = await retryConflicts(deadline, () =>
    Store.reserveChunk(loc, {
      now: nowIso,
      idleCutoff: new Date(now.getTime() - idleLimitMs(config)).toISOString(),
      bytes,
      maxBytes: MAX_CONTENT_BYTES,
    }),
  );
  if (!reserved.ok) {
    const current = reserved.message;
    if (!current) throw messageNotFound(messageId);
    if (current.stream_state !== 'streaming') throw notStreaming(messageId, current.stream_state);
    if (isOverdue(current, config, now.getTime())) throw await expiredConflict(config, loc, messageId, deadline, deps);
    throw tooLong('deltaText');
  }
  const { seq, message } = reserved;
  // With an Idempotency-Key the reply is stored with the chunk, in one transaction (issue 17
  // finding 6): the text through the previous chunk (usually cached) and this one.
  const keyedReply = replyStoredInTransaction(keyed)
    ? Store.toMessage({
        ...message,
        content_partial: partialAnswer(await StreamText.assemble(messageId, seq - 1), deltaText),
      })
    : undefined;
  const [written, evented] = await Promise.allSettled([
    keyedReply
      ? Store.putChunkWith(messageId, seq, deltaText, nowIso, completionInTransaction(keyed, keyedReply), deadline)
      : Store.putChunk(messageId, seq, deltaText, nowIso),
    putEphemeralEvent(EVENTS.messageStreamingChunk.of({ chatId: loc.chatId, messageId, deltaText }), nowIso),
  ]);
  if (written.status === 'rejected') throw written.reason;
  if (!written.value) {
    // A complete, cancel or timeout finished the stream between our numbering and our write.
    StreamText.markHoles(messageId, [seq]);
    const current = await Store.getMessage(loc);
    throw notStreaming(messageId, current?.stream_state ?? 'cancelled');
  }
  // The chunk is stored and must not be reported as failed (a retry would repeat it).
  if (evented.status === 'rejected') {
    logger.error('chunk appended but its ephemeral event failed', {
      chatId: loc.chatId,
      messageId,
      error: evented.reason,
    });
  }
  const { prefix } = await StreamText.assemble(messageId, seq, { seq, text: deltaText });
  // A keyed chunk answers exactly the reply it stored.
  return keyedReply ?? Store.toMessage({ ...message, content_partial: prefix || null });
}

/**
 * A chunk's answer (docs/architecture.md "Messages and streaming"): always a prefix of the final text. It is
 * the text through this chunk, unless a lower-numbered chunk posted concurrently is not stored
 * yet: then the text below that gap (without this chunk), never the chunks around a gap.
 * `below` is the assembly of the chunks before this one.
 */
function partialAnswer(below: StreamText.Assembled, deltaText: string): string | null {
  return below.missing.length === 0 ? below.text + deltaText : below.prefix || null;
}

/** The 409 for an operation on an overdue stream, after making its cancellation real. */
async function expiredConflict(
  config: InstanceConfig,
  loc: MessageLocation,
  messageId: string,
  deadline: Deadline,
  deps: Deps,
): Promise<ConflictError> {
  const outcome = await finish(config, loc, messageId, { kind: 'expire', deadline }, deps);
  return notStreaming(messageId, outcome.message?.stream_state ?? 'cancelled');
}

/** POST …/messages/{messageId}/complete (§5.4.4). */
export async function complete(
  config: InstanceConfig,
  messageId: string,
  finalText: string | undefined,
  chatId: string | undefined,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<Message> {
  if (finalText !== undefined && Buffer.byteLength(finalText, 'utf8') > MAX_CONTENT_BYTES) throw tooLong('finalText');
  const loc = await find(messageId, chatId);
  const outcome = await finish(config, loc, messageId, { kind: 'complete', finalText, keyed, deadline }, deps);
  return outcome.message!;
}

/** POST …/messages/{messageId}/cancel (§5.4.5). */
export async function cancel(
  config: InstanceConfig,
  messageId: string,
  chatId: string | undefined,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<Message> {
  const loc = await find(messageId, chatId);
  const outcome = await finish(config, loc, messageId, { kind: 'cancel', keyed, deadline }, deps);
  return outcome.message!;
}

/** POST /chats/{chatId}/messages/cancel-streaming (§5.4.6). */
export async function cancelAllStreaming(
  config: InstanceConfig,
  chatId: string,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<{ cancelledMessageIds: string[] }> {
  await existingChat(chatId);
  const cancelled: string[] = [];
  for (const messageId of await Queries.openStreams(chatId)) {
    try {
      const loc = await find(messageId);
      const outcome = await finish(config, loc, messageId, { kind: 'cancel', includeOverdue: true, deadline }, deps);
      if (outcome.finished) cancelled.push(messageId);
    } catch (error) {
      // Finished by someone else meanwhile: not ours to report.
      if (!(error instanceof ConflictError) && !(error instanceof NotFoundError)) throw error;
    }
  }
  return { cancelledMessageIds: cancelled };
}

export interface ExpiryOutcome {
  /** The stream is over (cancelled now, or finished before). */
  done: boolean;
  /** When not done: how long until it could be overdue. */
  waitMs: number;
}

/** The stream-timeout task (§4.2): cancels the stream if it has been idle too long. */
export async function expireIfIdle(
  config: InstanceConfig,
  messageId: string,
  deps: Deps = defaultDeps,
): Promise<ExpiryOutcome> {
  const loc = isId(messageId) ? await Store.locate(messageId) : undefined;
  if (!loc) return { done: true, waitMs: 0 };
  try {
    // The stream-timeout task is a job: no deadline.
    const outcome = await finish(config, loc, messageId, { kind: 'expire', deadline: NO_DEADLINE }, deps);
    return outcome.waitMs === undefined ? { done: true, waitMs: 0 } : { done: false, waitMs: outcome.waitMs };
  } catch (error) {
    if (error instanceof ConflictError) return { done: true, waitMs: 0 };
    throw error;
  }
}

/**
 * How a stream ends; a request's (complete, cancel) may store its reply with it (`keyed`). Its
 * writes plan with `deadline` (NO_DEADLINE for the stream-timeout task).
 */
type Finish = (
  | { kind: 'complete'; finalText: string | undefined; keyed?: KeyedReply | undefined }
  | { kind: 'cancel'; includeOverdue?: boolean; keyed?: KeyedReply | undefined }
  | { kind: 'expire' }
) & { deadline: Deadline };

interface FinishOutcome {
  message?: Message;
  /** This call ended the stream. */
  finished: boolean;
  /** expire only: the stream is still active; check again after this long. */
  waitMs?: number;
}

/** Waits for chunk writes that were numbered but not yet committed (they take milliseconds). */
const IN_FLIGHT_WAITS_MS = [50, 150, 400, 800];
/** Assembles again after each of IN_FLIGHT_WAITS_MS while numbered chunks are missing. */
const IN_FLIGHT_CHUNKS: RetryPolicy<StreamText.Assembled> = {
  attempts: IN_FLIGHT_WAITS_MS.length + 1,
  backoff: (tries) => IN_FLIGHT_WAITS_MS[tries - 1]!,
  retryResult: (assembled) => assembled.missing.length > 0,
};

/**
 * Ends a stream (complete, cancel or timeout), exactly once:
 * 1. read the message (its state and how many chunk numbers were handed out);
 * 2. assemble the chunks, waiting briefly for numbers still in flight; numbers that never
 *    arrive are voided in the same transaction, so their late writes fail (409) instead of
 *    being lost;
 * 3. one transaction: the message's final state and text (conditioned on it still streaming
 *    with that many chunks), the open-stream marker, the chat, the voids and the event.
 * A chunk numbered meanwhile fails step 3's condition, and the whole step is redone.
 */
async function finish(
  config: InstanceConfig,
  loc: MessageLocation,
  messageId: string,
  how: Finish,
  deps: Deps,
): Promise<FinishOutcome> {
  // One event number for every attempt; voided if the stream ends some other way.
  return withEventNumbers((take) => finishAttempts(config, loc, messageId, how, deps, () => take(1)));
}

async function finishAttempts(
  config: InstanceConfig,
  loc: MessageLocation,
  messageId: string,
  how: Finish,
  deps: Deps,
  eventNumber: () => Promise<EventReservation>,
): Promise<FinishOutcome> {
  return retry(CHUNKS_MOVED_ON, async () => {
    const message = await Store.getMessage(loc);
    if (!message) throw messageNotFound(messageId);
    if (message.stream_state !== 'streaming') throw notStreaming(messageId, message.stream_state);
    const now = deps.clock();
    const overdue = isOverdue(message, config, now.getTime());
    if (how.kind === 'expire' && !overdue) {
      return { finished: false, waitMs: Date.parse(message.updated_at) + idleLimitMs(config) - now.getTime() + 1 };
    }
    if (overdue && how.kind === 'complete') throw await expiredConflict(config, loc, messageId, how.deadline, deps);
    if (overdue && how.kind === 'cancel' && !how.includeOverdue)
      throw await expiredConflict(config, loc, messageId, how.deadline, deps);

    const count = message.chunk_count ?? 0;
    const assembled = await retry(IN_FLIGHT_CHUNKS, () => StreamText.assemble(messageId, count));
    const voids = [...assembled.missing, ...StreamText.assumedHoles(messageId, count)];
    const nowIso = now.toISOString();
    // An overdue stream ended when its timeout ran out, whenever this runs: reads showed it so.
    const endedAt = overdue ? timedOutAt(message, config) : nowIso;
    const cancelled = how.kind !== 'complete';
    const text = assembled.text;
    const contentFinal = cancelled ? null : (how.finalText ?? text);
    const contentPartial = cancelled && text !== '' ? text : null;
    if (contentFinal !== null && Buffer.byteLength(contentFinal, 'utf8') > MAX_CONTENT_BYTES)
      throw tooLong('finalText');

    // The message changed (a chunk was numbered, or another finisher won) or a chunk we meant
    // to void arrived after all: read again.
    const readAgain = () => new RetryFinish();
    const finishing = Store.finishStream(
      loc,
      message,
      {
        state: cancelled ? 'cancelled' : 'complete',
        contentFinal,
        contentPartial,
        now: endedAt,
        chunkCount: count,
        ...(how.kind === 'expire' ? { unchangedSince: message.updated_at } : {}),
      },
      readAgain,
    );
    const voidItems = voids.map((seq) => guarded(Store.voidChunk(messageId, seq, nowIso), readAgain));
    const event = EVENTS.messageStreamingComplete.of({
      chatId: loc.chatId,
      messageId,
      role: message.role,
      streamState: cancelled ? 'cancelled' : 'complete',
      finalText: contentFinal,
    });
    const finished: MessageRecord = {
      ...message,
      stream_state: cancelled ? 'cancelled' : 'complete',
      content_final: contentFinal,
      content_partial: contentPartial,
      updated_at: endedAt,
    };
    // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
    // Not for a timeout's cancel: it is not the reply of the request that found the stream overdue.
    const completion = how.kind === 'expire' ? [] : completionInTransaction(how.keyed, Store.toMessage(finished));
    // The event's number and (for a completion) the chat's pin as this container knows it
    // (chatFacts: read only the first time; a stale pin fails the chat's condition and
    // commitTouchingChat retries with the pin it finds), side by side.
    const [numbers, chat] = await Promise.all([eventNumber(), cancelled ? undefined : chatFacts(loc.chatId)]);
    const eventItems = numbers.items([event], nowIso);
    if (cancelled) {
      await transact(
        [
          ...finishing,
          ...voidItems,
          ...completion,
          guarded(Chats.closeStream(loc.chatId, loc.sk, nowIso), () => chatNotFound(loc.chatId)),
          ...eventItems,
        ],
        how.deadline,
      );
    } else {
      const preview = previewOf({ content_final: contentFinal, content_partial: null });
      if (!chat) throw chatNotFound(loc.chatId);
      const committed = await commitTouchingChat(
        loc.chatId,
        {
          now: nowIso,
          pinned: chat.pinned,
          lastMessageAt: nowIso,
          preview: { text: preview, role: message.role },
          streamClosed: loc.sk,
        },
        [...finishing, ...voidItems, ...completion],
        eventItems,
        how.deadline,
      );
      rememberChatFacts({ ...chat, pinned: committed.pinned });
    }
    StreamText.forget(messageId);
    return { message: Store.toMessage(finished), finished: true };
  });
}

class RetryFinish extends Error {}

/**
 * A finish whose message changed under it (a chunk numbered meanwhile, another finisher won) or
 * whose voided chunk arrived after all is redone on a fresh read at once: the read is the
 * wait. Twenty tries, then the last RetryFinish is thrown (500): a stream that busy is a bug.
 */
const CHUNKS_MOVED_ON: RetryPolicy = {
  attempts: 20,
  backoff: () => 0,
  retryable: (error) => error instanceof RetryFinish,
};
