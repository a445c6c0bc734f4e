/**
 * Messages and token streaming: the contract's rules of §2.2, §3.2, §4.2 and §5.4, written
 * once for every adapter (HTTP handlers, the stream-timeout task).
 *
 * Storage and cost (see store/messages-repo.ts):
 * - create: GetItem chat + sequence UpdateItem + one TransactWriteItems (message, pointer,
 *   chat counters, events, dispatch input, media links);
 * - chunk: one conditional UpdateItem that numbers the chunk + one TransactWriteItems (chunk
 *   item, chat updated_at, ephemeral event). Both are the same size at chunk 1 and chunk
 *   2,000; the text for the response comes from the instance cache (stream-text.ts);
 * - complete / cancel / timeout: the assembled text is written into the message item once.
 */
import { ConflictError, FieldRuleError, NotFoundError, PayloadTooLargeError, SchemaValidationError } from '../errors.js';
import { isId, newId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import { startStreamTimer } from '../platform/stream-timer.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatActivity } from '../store/chats-repo.js';
import { decodeCursor, encodeCursor } from '../store/cursor.js';
import { guarded, retryConflicts, transact } from '../store/db.js';
import type { TransactWrite } from '../store/db.js';
import { dispatchInputWrites, recordUserTyping } from '../store/dispatch-repo.js';
import { ephemeralEventPut, withEventNumbers, withEvents } from '../store/events-repo.js';
import type { EventReservation, NewEvent } from '../store/events-repo.js';
import { getMedia, linkMedia } from '../store/media-repo.js';
import type { MediaRecord } from '../store/media-repo.js';
import * as Store from '../store/messages-repo.js';
import type { MessageLocation, MessageRecord } from '../store/messages-repo.js';
import { chatNotFound, existingChat } from './chats.js';
import { commitTouchingChat } from './chat-writes.js';
import * as Dispatch from './dispatch.js';
import { locationCache } from './locations.js';
import type { Page } from './chats.js';
import { USER_SENDER_ID, previewOf } from '../model.js';
import type { Message, MessageRole, StreamState } from '../model.js';
import * as StreamText from './stream-text.js';

export interface MessageDeps {
  clock: () => Date;
  newId: () => string;
}
export const defaultDeps: MessageDeps = { clock: () => new Date(), newId };

/**
 * A message item holds at most 400 KB, and the final text of a stream is written into it
 * once, so a message's text is bounded (with room for its other fields and trace).
 */
export const MAX_CONTENT_BYTES = 300_000;

export const messageNotFound = (messageId: string) => NotFoundError.of('messageId', messageId, 'Message not found.');

const notStreaming = (messageId: string, state: StreamState) =>
  new ConflictError('Message is not in streaming state.', { messageId, streamState: state });

const tooLong = () => new PayloadTooLargeError(`Message content exceeds ${MAX_CONTENT_BYTES} bytes.`, { maxContentBytes: MAX_CONTENT_BYTES });

// ---------------------------------------------------------------------------------------
// Create
// ---------------------------------------------------------------------------------------

/** The create body after schema validation (§5.4.1; both field-name forms). */
export interface NewMessage {
  role: MessageRole;
  senderId?: string | undefined;
  agentId?: string | undefined;
  content?: string | undefined;
  streaming?: boolean | undefined;
  stream?: boolean | undefined;
  modelId?: string | undefined;
  trace?: Record<string, unknown> | undefined;
}

const DEFAULT_SENDER: Record<MessageRole, string | undefined> = {
  user: USER_SENDER_ID,
  system: 'system',
  tool: 'tool',
  agent: undefined,
};

interface MediaRefs {
  /** Ids to link (mediaIds when present, else the legacy mediaId). */
  link: string[];
  legacyKind?: string;
  /** Any reference present (mediaIds or mediaId). */
  any: boolean;
}

/**
 * Rule checks 6–9 on the trace's media references. `trace.kind` is a media kind only in the
 * legacy form (check 9 runs only when `mediaId` is present and `mediaIds` absent); otherwise
 * it is free-form: stored with the trace and, when a string, passed on as `traceKind` (§4.4.1).
 */
function mediaRefsOf(trace: Record<string, unknown> | undefined): MediaRefs {
  if (!trace) return { link: [], any: false };
  const { mediaIds, mediaId, kind } = trace;
  if (mediaIds !== undefined) {
    if (!Array.isArray(mediaIds)) throw new FieldRuleError('trace.mediaIds', 'trace.mediaIds must be an array when provided.');
    mediaIds.forEach((id, i) => {
      if (typeof id !== 'string' || id === '') {
        throw new FieldRuleError('trace.mediaIds', `trace.mediaIds[${i}] must be a non-empty string.`);
      }
    });
    return { link: mediaIds as string[], any: mediaIds.length > 0 };
  }
  if (mediaId === undefined) return { link: [], any: false };
  if (typeof mediaId !== 'string' || mediaId === '') {
    throw new FieldRuleError('trace.mediaId', 'trace.mediaId must be a non-empty string when provided.');
  }
  if (kind === undefined) return { link: [mediaId], any: true };
  if (kind !== 'image' && kind !== 'audio' && kind !== 'file') {
    throw new FieldRuleError('trace.kind', 'trace.kind must be image, audio, or file when provided.');
  }
  return { link: [mediaId], any: true, legacyKind: kind };
}

function checkSender(role: MessageRole, senderId: string, config: InstanceConfig): void {
  const ok =
    role === 'agent' ? config.agents.some((a) => a.id === senderId) : senderId === DEFAULT_SENDER[role];
  if (ok) return;
  const message =
    role === 'agent'
      ? 'senderId must match a configured agent id for role agent.'
      : `senderId must be ${DEFAULT_SENDER[role]} for role ${role}.`;
  throw new FieldRuleError('senderId', message);
}

/** Checks 16–18: the referenced media exist in this chat, are unattached, and match a legacy kind. */
async function checkMedia(chatId: string, refs: MediaRefs): Promise<MediaRecord[]> {
  if (refs.link.length === 0) return [];
  const found = await getMedia(refs.link);
  const media: MediaRecord[] = [];
  for (const id of new Set(refs.link)) {
    const m = found.get(id);
    if (!m || m.chat_id !== chatId) throw new FieldRuleError('trace.mediaIds', 'A media ID in trace does not belong to this chat.');
    if (m.message_id) throw new FieldRuleError('trace.mediaIds', 'A media ID in trace is already linked to another message.');
    media.push(m);
  }
  if (refs.legacyKind !== undefined && media[0] && media[0].kind !== refs.legacyKind) {
    throw new FieldRuleError('trace.kind', 'trace.kind does not match linked media kind.');
  }
  return media;
}

/** §3.1 at creation: text first, else the first linked medium's kind decides. */
function mediaPreview(media: MediaRecord[]): string | undefined {
  if (media.length === 0) return undefined;
  return media[0]!.kind === 'audio' ? 'Voice note' : 'Attachment';
}

/** The dispatch input's media ids (§4.4.1): mediaIds' non-empty strings, then mediaId. */
function dispatchMediaIds(trace: Record<string, unknown> | null): string[] {
  if (!trace) return [];
  const ids = Array.isArray(trace.mediaIds) ? trace.mediaIds.filter((v): v is string => typeof v === 'string' && v !== '') : [];
  if (typeof trace.mediaId === 'string') ids.push(trace.mediaId);
  return ids;
}

/** POST /chats/{chatId}/messages (§5.4.1). */
export async function create(config: InstanceConfig, chatId: string, input: NewMessage, deps: MessageDeps = defaultDeps): Promise<Message> {
  const role = input.role;
  const senderGiven = input.senderId ?? input.agentId;
  const senderId = senderGiven ?? DEFAULT_SENDER[role];
  if (senderId === undefined) throw new SchemaValidationError([], { senderId: ['senderId is required.'] });
  if (senderId === '') throw new FieldRuleError('senderId', 'senderId is required.');
  const streaming = input.streaming ?? input.stream ?? false;
  const refs = mediaRefsOf(input.trace);
  if (streaming && role !== 'agent') throw new FieldRuleError('streaming', 'streaming start is only supported for role agent.');
  const content = (input.content ?? '').trim();
  if (streaming && content !== '') throw new FieldRuleError('content', 'content is not allowed when streaming=true.');
  if (!streaming && content === '' && !refs.any) {
    throw new FieldRuleError('content', 'content is required when streaming is false unless trace.mediaId or trace.mediaIds is provided.');
  }
  checkSender(role, senderId, config);
  if (Buffer.byteLength(content, 'utf8') > MAX_CONTENT_BYTES) throw tooLong();

  const chat = await existingChat(chatId);
  const media = streaming ? [] : await checkMedia(chatId, refs);

  const now = deps.clock().toISOString();
  const trace = input.trace ?? null;
  const message: MessageRecord = {
    id: deps.newId(),
    chat_id: chatId,
    role,
    sender_id: senderId,
    created_at: now,
    updated_at: now,
    content_final: streaming ? null : content === '' ? null : content,
    content_partial: null,
    stream_state: streaming ? 'streaming' : 'complete',
    model_id: chat.model_id,
    trace,
    ...(mediaPreview(media) ? { media_preview: mediaPreview(media) } : {}),
  };

  const events: NewEvent[] = media.map((m) => ({
    type: 'media.attached',
    payload: { chatId, mediaId: m.id, messageId: message.id, kind: m.kind },
  }));
  events.push({
    type: 'message.created',
    payload: {
      chatId,
      messageId: message.id,
      role,
      senderId,
      streamState: message.stream_state,
      contentFinal: message.content_final,
      createdAt: now,
      trace,
    },
  });
  const alreadyLinked = () => new FieldRuleError('trace.mediaIds', 'A media ID in trace is already linked to another message.');
  const items: TransactWrite[] = [...Store.putMessage(message), ...media.map((m) => guarded(linkMedia(m.id, chatId, message.id), alreadyLinked))];
  if (role === 'user') {
    items.push(
      ...dispatchInputWrites({
        id: deps.newId(),
        chat_id: chatId,
        source_kind: 'user_message',
        source_id: message.id,
        sender_id: USER_SENDER_ID,
        content: message.content_final ?? '',
        ...(typeof trace?.kind === 'string' ? { trace_kind: trace.kind } : {}),
        media_ids: dispatchMediaIds(trace),
        state: 'pending',
        created_at: now,
      }),
    );
  }
  const preview = previewOf(message);
  const activity: ChatActivity = {
    now,
    pinned: chat.pinned,
    lastMessageAt: now,
    ...(preview !== null ? { preview: { text: preview, role } } : {}),
    countsUnread: role !== 'user',
  };
  await withEvents(events, now, (eventItems) => commitTouchingChat(chatId, activity, items, eventItems));
  if (streaming) await startStreamTimer({ messageId: message.id, waitSeconds: config.server.streamTimeoutSeconds });
  // A user message is a dispatch input (§4.4.1): seal it or schedule the sealing.
  if (role === 'user') await Dispatch.inputAdded(config, chatId);
  return Store.toMessage(message);
}

// ---------------------------------------------------------------------------------------
// List
// ---------------------------------------------------------------------------------------

export interface MessageListQuery {
  cursor?: string | undefined;
  limit: number;
}

/** GET /chats/{chatId}/messages (§5.4.2): newest first, keyset cursor, hidden messages omitted. */
export async function list(config: InstanceConfig, chatId: string, q: MessageListQuery, deps: MessageDeps = defaultDeps): Promise<Page<Message>> {
  await existingChat(chatId);
  const listName = `messages:${chatId}`;
  let afterSk: string | undefined;
  if (q.cursor !== undefined) {
    const position = await decodeCursor(listName, q.cursor);
    if (typeof position.s !== 'string') throw new FieldRuleError('cursor', 'Invalid cursor value.');
    afterSk = position.s;
  }
  const page = await Store.queryMessages(chatId, q.limit, afterSk);
  const now = deps.clock().getTime();
  const data: Message[] = [];
  for (const record of page.messages) {
    const shown = await present(record, config, now);
    if (shown) data.push(shown);
  }
  const last = page.messages.at(-1);
  const next = page.hasMore && last ? await encodeCursor(listName, { s: Store.sortKeyOf(last) }) : null;
  return { data, cursor: { next, hasMore: next !== null } };
}

/**
 * A stored message as clients see it: a streaming message carries its assembled text, and an
 * overdue one is shown as the cancelled message it is about to become (§4.2; the timer or the
 * next write makes it so). Returns undefined when it would be hidden.
 */
async function present(record: MessageRecord, config: InstanceConfig, nowMs: number): Promise<Message | undefined> {
  if (record.stream_state !== 'streaming') return Store.toMessage(record);
  const partial = await StreamText.partialText(record.id, record.chunk_count);
  if (!isOverdue(record, config, nowMs)) return Store.toMessage({ ...record, content_partial: partial });
  if (partial === null && !record.media_preview) return undefined;
  return Store.toMessage({ ...record, stream_state: 'cancelled', content_partial: partial, content_final: null });
}

// ---------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------

const idleLimitMs = (config: InstanceConfig) => config.server.streamTimeoutSeconds * 1000;

/** No activity for longer than the timeout (measured from updated_at, §4.2). */
function isOverdue(message: Pick<Message, 'updated_at'>, config: InstanceConfig, nowMs: number): boolean {
  return nowMs - Date.parse(message.updated_at) > idleLimitMs(config);
}

const locate = locationCache(Store.locate, messageNotFound);

/**
 * Finds a message by id. With `chatId` (the seed's chat-scoped paths), the chat must exist
 * and own the message (§5.4.5).
 */
async function find(messageId: string, chatId?: string): Promise<MessageLocation> {
  if (chatId !== undefined) {
    await existingChat(chatId);
  }
  const loc = await locate(messageId);
  if (chatId !== undefined && loc.chatId !== chatId) throw messageNotFound(messageId);
  return loc;
}

/** POST …/messages/{messageId}/chunks (§5.4.3). */
export async function appendChunk(
  config: InstanceConfig,
  messageId: string,
  deltaText: string,
  chatId?: string,
  deps: MessageDeps = defaultDeps,
): Promise<Message> {
  const loc = await find(messageId, chatId);
  const now = deps.clock();
  const nowIso = now.toISOString();
  const bytes = Buffer.byteLength(deltaText, 'utf8');
  const reserved = await retryConflicts(() =>
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
    if (isOverdue(current, config, now.getTime())) throw await expiredConflict(config, loc, messageId, deps);
    throw tooLong();
  }
  const { seq, message } = reserved;
  // The chunk and its event commit together; the chat's updated_at is bumped beside them by
  // a plain UpdateItem, so concurrent chunks of one chat never contend in a transaction.
  const [written, touched] = await Promise.allSettled([
    transact(
      [
        guarded(Store.chunkWrite(messageId, seq, deltaText, nowIso), () => new ChunkVoided()),
        ephemeralEventPut({ type: 'message.streaming.chunk', payload: { chatId: loc.chatId, messageId, deltaText } }, nowIso),
      ],
    ),
    retryConflicts(() => Chats.touchChat(loc.chatId, nowIso)),
  ]);
  if (written.status === 'rejected') {
    if (!(written.reason instanceof ChunkVoided)) throw written.reason;
    // A complete, cancel or timeout finished the stream between our numbering and our write.
    StreamText.markHoles(messageId, [seq]);
    const current = await Store.getMessage(loc);
    throw notStreaming(messageId, current?.stream_state ?? 'cancelled');
  }
  if (touched.status === 'rejected') {
    // The chunk is committed and must not be reported as failed (a retry would repeat it).
    logger.error('chunk appended but the chat updated_at bump failed', { chatId: loc.chatId, messageId, error: touched.reason });
  }
  const { text } = await StreamText.assemble(messageId, seq, { seq, text: deltaText });
  return Store.toMessage({ ...message, content_partial: text });
}

class ChunkVoided extends Error {}

/** The 409 for an operation on an overdue stream, after making its cancellation real. */
async function expiredConflict(config: InstanceConfig, loc: MessageLocation, messageId: string, deps: MessageDeps): Promise<ConflictError> {
  const outcome = await finish(config, loc, messageId, { kind: 'expire' }, deps);
  return notStreaming(messageId, outcome.message?.stream_state ?? 'cancelled');
}

/** POST …/messages/{messageId}/complete (§5.4.4). */
export async function complete(
  config: InstanceConfig,
  messageId: string,
  finalText: string | undefined,
  chatId?: string,
  deps: MessageDeps = defaultDeps,
): Promise<Message> {
  if (finalText !== undefined && Buffer.byteLength(finalText, 'utf8') > MAX_CONTENT_BYTES) throw tooLong();
  const loc = await find(messageId, chatId);
  const outcome = await finish(config, loc, messageId, { kind: 'complete', finalText }, deps);
  return outcome.message!;
}

/** POST …/messages/{messageId}/cancel (§5.4.5). */
export async function cancel(config: InstanceConfig, messageId: string, chatId?: string, deps: MessageDeps = defaultDeps): Promise<Message> {
  const loc = await find(messageId, chatId);
  const outcome = await finish(config, loc, messageId, { kind: 'cancel' }, deps);
  return outcome.message!;
}

/** POST /chats/{chatId}/messages/cancel-streaming (§5.4.6). */
export async function cancelAllStreaming(config: InstanceConfig, chatId: string, deps: MessageDeps = defaultDeps): Promise<{ cancelledMessageIds: string[] }> {
  await existingChat(chatId);
  const cancelled: string[] = [];
  for (const messageId of await Store.openStreams(chatId)) {
    try {
      const loc = await find(messageId);
      const outcome = await finish(config, loc, messageId, { kind: 'cancel', includeOverdue: true }, deps);
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
export async function expireIfIdle(config: InstanceConfig, messageId: string, deps: MessageDeps = defaultDeps): Promise<ExpiryOutcome> {
  const loc = isId(messageId) ? await Store.locate(messageId) : undefined;
  if (!loc) return { done: true, waitMs: 0 };
  try {
    const outcome = await finish(config, loc, messageId, { kind: 'expire' }, deps);
    return outcome.waitMs === undefined ? { done: true, waitMs: 0 } : { done: false, waitMs: outcome.waitMs };
  } catch (error) {
    if (error instanceof ConflictError) return { done: true, waitMs: 0 };
    throw error;
  }
}

type Finish =
  | { kind: 'complete'; finalText: string | undefined }
  | { kind: 'cancel'; includeOverdue?: boolean }
  | { kind: 'expire' };

interface FinishOutcome {
  message?: Message;
  /** This call ended the stream. */
  finished: boolean;
  /** expire only: the stream is still active; check again after this long. */
  waitMs?: number;
}

/** Waits for chunk writes that were numbered but not yet committed (they take milliseconds). */
const IN_FLIGHT_WAITS_MS = [50, 150, 400, 800];

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
async function finish(config: InstanceConfig, loc: MessageLocation, messageId: string, how: Finish, deps: MessageDeps): Promise<FinishOutcome> {
  // One event number for every attempt; voided if the stream ends some other way.
  return withEventNumbers((take) => finishAttempts(config, loc, messageId, how, deps, () => take(1)));
}

async function finishAttempts(
  config: InstanceConfig,
  loc: MessageLocation,
  messageId: string,
  how: Finish,
  deps: MessageDeps,
  eventNumber: () => Promise<EventReservation>,
): Promise<FinishOutcome> {
  for (let attempt = 1; ; attempt++) {
    const message = await Store.getMessage(loc);
    if (!message) throw messageNotFound(messageId);
    if (message.stream_state !== 'streaming') throw notStreaming(messageId, message.stream_state);
    const now = deps.clock();
    const overdue = isOverdue(message, config, now.getTime());
    if (how.kind === 'expire' && !overdue) {
      return { finished: false, waitMs: Date.parse(message.updated_at) + idleLimitMs(config) - now.getTime() + 1 };
    }
    if (overdue && how.kind === 'complete') throw await expiredConflict(config, loc, messageId, deps);
    if (overdue && how.kind === 'cancel' && !how.includeOverdue) throw await expiredConflict(config, loc, messageId, deps);

    const count = message.chunk_count ?? 0;
    let assembled = await StreamText.assemble(messageId, count);
    for (const wait of IN_FLIGHT_WAITS_MS) {
      if (assembled.missing.length === 0) break;
      await new Promise((r) => setTimeout(r, wait));
      assembled = await StreamText.assemble(messageId, count);
    }
    const voids = [...assembled.missing, ...StreamText.assumedHoles(messageId, count)];
    const nowIso = now.toISOString();
    const cancelled = how.kind !== 'complete';
    const text = assembled.text;
    const contentFinal = cancelled ? null : (how.finalText ?? text);
    const contentPartial = cancelled && text !== '' ? text : null;
    if (contentFinal !== null && Buffer.byteLength(contentFinal, 'utf8') > MAX_CONTENT_BYTES) throw tooLong();

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
        now: nowIso,
        chunkCount: count,
        ...(how.kind === 'expire' ? { unchangedSince: message.updated_at } : {}),
      },
      readAgain,
    );
    const voidItems = voids.map((seq) => guarded(Store.voidChunk(messageId, seq, nowIso), readAgain));
    const event: NewEvent = {
      type: 'message.streaming.complete',
      payload: {
        chatId: loc.chatId,
        messageId,
        role: message.role,
        streamState: cancelled ? 'cancelled' : 'complete',
        finalText: contentFinal,
      },
    };
    try {
      const eventItems = (await eventNumber()).items([event], nowIso);
      if (cancelled) {
        await transact([...finishing, ...voidItems, guarded(Chats.touchUpdatedAt(loc.chatId, nowIso), () => chatNotFound(loc.chatId)), ...eventItems]);
      } else {
        const preview = previewOf({ content_final: contentFinal, content_partial: null });
        const chat = await Chats.getChat(loc.chatId);
        if (!chat) throw chatNotFound(loc.chatId);
        await commitTouchingChat(
          loc.chatId,
          { now: nowIso, pinned: chat.pinned, lastMessageAt: nowIso, preview: { text: preview, role: message.role } },
          [...finishing, ...voidItems],
          eventItems,
        );
      }
    } catch (error) {
      if (!(error instanceof RetryFinish) || attempt >= 20) throw error;
      continue;
    }
    StreamText.forget(messageId);
    const finished: MessageRecord = {
      ...message,
      stream_state: cancelled ? 'cancelled' : 'complete',
      content_final: contentFinal,
      content_partial: contentPartial,
      updated_at: nowIso,
    };
    return { message: Store.toMessage(finished), finished: true };
  }
}

class RetryFinish extends Error {}

// ---------------------------------------------------------------------------------------
// Typing
// ---------------------------------------------------------------------------------------

/** POST /chats/{chatId}/typing (§5.3.8): an ephemeral `chat.typing`; nothing stored. */
export async function agentTyping(chatId: string, agentId: string, deps: MessageDeps = defaultDeps): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  await transact([guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)), ephemeralEventPut({ type: 'chat.typing', payload: { chatId, agentId } }, now)]);
}

/**
 * POST /chats/{chatId}/user-typing (§5.3.9): an ephemeral `chat.user_typing`; in
 * batched_sequential mode also the time, for the dispatch typing grace (§4.4.3).
 */
export async function userTyping(config: InstanceConfig, chatId: string, deps: MessageDeps = defaultDeps): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const items: TransactWrite[] = [
    guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)),
    ephemeralEventPut({ type: 'chat.user_typing', payload: { chatId, senderId: USER_SENDER_ID } }, now),
  ];
  if (config.server.dispatch.mode === 'batched_sequential') items.push(recordUserTyping(chatId, now));
  await transact(items);
}
