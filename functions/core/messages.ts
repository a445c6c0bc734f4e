/**
 * Messages: creation and listing (contract §2.2, §3.2, §5.4.1–5.4.2), written once for every
 * adapter. The streaming lifecycle is in streaming.ts, the rules both share in message-rules.ts,
 * typing in typing.ts.
 *
 * Storage and cost (see store/messages-repo.ts): create is GetItem chat + sequence UpdateItem
 * + one TransactWriteItems (message, pointer, chat counters, events, dispatch input, media
 * links); list is one strongly consistent Query of the chat's partition.
 */
import { FieldRuleError, SchemaValidationError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import { mayStartBesideCommit, startStreamTimer } from '../platform/stream-timer.js';
import type { StreamTimerInput } from '../platform/stream-timer.js';
import type { ChatActivity, ChatRecord } from '../store/chats-repo.js';
import { encodeCursor, sortKeyAfter } from '../store/cursor.js';
import { guarded } from '../store/db.js';
import type { TransactWrite } from '../store/db.js';
import { dispatchInputWrites } from '../store/dispatch/inputs.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import { getMedia, linkMedia } from '../store/media-repo.js';
import type { MediaRecord } from '../store/media-repo.js';
import * as Queries from '../store/message-queries-repo.js';
import * as Store from '../store/messages-repo.js';
import type { MessageRecord } from '../store/messages-repo.js';
import { chatFacts, existingChat, rememberChatFacts } from './chat-lookup.js';
import type { ChatFacts } from './chat-lookup.js';
import type { Page } from './chat-reads.js';
import { StaleChat, commitTouchingChat } from './chat-activity.js';
import { inputAdded } from './dispatch/seal.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import { MAX_CONTENT_BYTES, isOverdue, timedOutAt, tooLong } from './message-rules.js';
import { USER_SENDER_ID, previewOf } from '../model.js';
import type { Message, MessageRole } from '../model.js';
import { EVENTS } from '../model/events.js';
import type { NewPersistedEvent } from '../model/events.js';
import * as StreamText from './stream-text.js';

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
    if (!Array.isArray(mediaIds))
      throw new FieldRuleError('trace.mediaIds', 'trace.mediaIds must be an array when provided.');
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
  const ok = role === 'agent' ? config.agents.some((a) => a.id === senderId) : senderId === DEFAULT_SENDER[role];
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
    if (!m || m.chat_id !== chatId)
      throw new FieldRuleError('trace.mediaIds', 'A media ID in trace does not belong to this chat.');
    if (m.message_id)
      throw new FieldRuleError('trace.mediaIds', 'A media ID in trace is already linked to another message.');
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
  const ids = Array.isArray(trace.mediaIds)
    ? trace.mediaIds.filter((v): v is string => typeof v === 'string' && v !== '')
    : [];
  if (typeof trace.mediaId === 'string') ids.push(trace.mediaId);
  return ids;
}

/** POST /chats/{chatId}/messages (§5.4.1). */
export async function create(
  config: InstanceConfig,
  chatId: string,
  input: NewMessage,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<Message> {
  const role = input.role;
  const senderGiven = input.senderId ?? input.agentId;
  const senderId = senderGiven ?? DEFAULT_SENDER[role];
  if (senderId === undefined) throw new SchemaValidationError([], { senderId: ['senderId is required.'] });
  if (senderId === '') throw new FieldRuleError('senderId', 'senderId is required.');
  const streaming = input.streaming ?? input.stream ?? false;
  const refs = mediaRefsOf(input.trace);
  if (streaming && role !== 'agent')
    throw new FieldRuleError('streaming', 'streaming start is only supported for role agent.');
  const content = (input.content ?? '').trim();
  if (streaming && content !== '') throw new FieldRuleError('content', 'content is not allowed when streaming=true.');
  if (!streaming && content === '' && !refs.any) {
    throw new FieldRuleError(
      'content',
      'content is required when streaming is false unless trace.mediaId or trace.mediaIds is provided.',
    );
  }
  checkSender(role, senderId, config);
  if (Buffer.byteLength(content, 'utf8') > MAX_CONTENT_BYTES) throw tooLong();

  let chat = await chatFacts(chatId);
  /** The chat as a StaleChat found it: the next attempt starts from it. */
  let found: ChatRecord | undefined;
  return retry(MODEL_CHANGED, async () => {
    if (found) {
      rememberChatFacts(found);
      chat = found;
    }
    try {
      const checked = { role, senderId, streaming, content, refs, trace: input.trace };
      return await createIn(config, chat, checked, keyed, deadline, deps);
    } catch (error) {
      if (error instanceof StaleChat) found = error.chat;
      throw error;
    }
  });
}

/**
 * The chat's model changed since this container cached it (StaleChat): once more with the chat
 * as it is, at once (nothing was written); a third StaleChat is answered as it is.
 */
const MODEL_CHANGED: RetryPolicy = {
  attempts: 3,
  backoff: () => 0,
  retryable: (error) => error instanceof StaleChat,
};

interface CheckedMessage {
  role: MessageRole;
  senderId: string;
  streaming: boolean;
  content: string;
  refs: MediaRefs;
  trace: Record<string, unknown> | undefined;
}

/** The writes of a checked message into `chat` (checks 16 to 18 included). */
async function createIn(
  config: InstanceConfig,
  chat: ChatFacts,
  { role, senderId, streaming, content, refs, trace: givenTrace }: CheckedMessage,
  keyed: KeyedReply | undefined,
  deadline: Deadline,
  deps: Deps,
): Promise<Message> {
  const chatId = chat.id;
  const media = streaming ? [] : await checkMedia(chatId, refs);

  const now = deps.clock().toISOString();
  const trace = givenTrace ?? null;
  const streamState = streaming ? 'streaming' : 'complete';
  const message: MessageRecord = {
    id: deps.newId(),
    chat_id: chatId,
    role,
    sender_id: senderId,
    created_at: now,
    updated_at: now,
    content_final: streaming ? null : content === '' ? null : content,
    content_partial: null,
    stream_state: streamState,
    model_id: chat.model_id,
    trace,
    ...(mediaPreview(media) ? { media_preview: mediaPreview(media) } : {}),
    ...(media.length > 0 ? { linked_media: Store.linkedMediaOf(media.map((m) => m.kind)) } : {}),
  };

  const events: NewPersistedEvent[] = media.map((m) =>
    EVENTS.mediaAttached.of({ chatId, mediaId: m.id, messageId: message.id, kind: m.kind }),
  );
  events.push(
    EVENTS.messageCreated.of({
      chatId,
      messageId: message.id,
      role,
      senderId,
      streamState,
      contentFinal: message.content_final,
      createdAt: now,
      trace,
    }),
  );
  const alreadyLinked = () =>
    new FieldRuleError('trace.mediaIds', 'A media ID in trace is already linked to another message.');
  const items: TransactWrite[] = [
    ...Store.putMessage(message),
    ...media.map((m) => guarded(linkMedia(m.id, chatId, message.id), alreadyLinked)),
  ];
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
    // Its chunks bump the chat's updated_at through the message (core/chat-reads.ts withStreamActivity).
    ...(streaming ? { streamOpened: Store.sortKeyOf(message) } : {}),
  };
  const result = Store.toMessage(message);
  // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
  items.push(...completionInTransaction(keyed, result));
  const timer = streaming ? streamTimerOf(config, message.id) : undefined;
  // The stream's check goes out beside the commit when it cannot arrive before it (never throws).
  const early = timer && mayStartBesideCommit(timer) ? startStreamTimer(timer) : undefined;
  const committed = await withEvents(events, now, (eventItems) =>
    commitTouchingChat(chatId, { ...activity, modelId: chat.model_id }, items, eventItems, deadline),
  );
  rememberChatFacts({ ...chat, pinned: committed.pinned });
  if (early) await early;
  else if (timer) await startStreamTimer(timer);
  // A user message is a dispatch input (§4.4.1): seal it or schedule the sealing.
  if (role === 'user') await inputAdded(config, chatId, deadline);
  return result;
}

/**
 * What create does after its commit, redone for a replayed create (http() afterReplay): a crash
 * between the commit and these would have skipped them. Both are idempotent: the stream's timer
 * execution is named for its message (a second start finds it), and a second dispatch signal
 * finds nothing left to seal. Neither throws.
 */
export async function redoAfterCreate(
  config: InstanceConfig,
  chatId: string,
  created: Message,
  deadline: Deadline,
): Promise<void> {
  if (created.stream_state === 'streaming') await startStreamTimer(streamTimerOf(config, created.id));
  if (created.role === 'user') await inputAdded(config, chatId, deadline);
}

/** A new stream's timer: checked once the configured idle timeout has passed (§4.2). */
const streamTimerOf = (config: InstanceConfig, messageId: string): StreamTimerInput => ({
  messageId,
  waitSeconds: config.server.streamTimeoutSeconds,
});

// ---------------------------------------------------------------------------------------
// List
// ---------------------------------------------------------------------------------------

export interface MessageListQuery {
  cursor?: string | undefined;
  limit: number;
}

/** GET /chats/{chatId}/messages (§5.4.2): newest first, keyset cursor, hidden messages omitted. */
export async function list(
  config: InstanceConfig,
  chatId: string,
  q: MessageListQuery,
  deps: Deps = defaultDeps,
): Promise<Page<Message>> {
  const listName = `messages:${chatId}`;
  const afterSk = await sortKeyAfter(listName, q.cursor);
  await existingChat(chatId);
  const page = await Queries.queryMessages(chatId, q.limit, afterSk);
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
  if (partial === null && !Store.hasLinkedMedia(record)) return undefined;
  // Cancelled when its timeout ran out, as the timer's write will record it (message-rules.ts).
  return Store.toMessage({
    ...record,
    stream_state: 'cancelled',
    content_partial: partial,
    content_final: null,
    updated_at: timedOutAt(record, config),
  });
}
