/**
 * Chats: the contract's rules for creating, reading, listing and changing chats (§2.1, §3,
 * §4.1, §5.3). Every mutation writes the chat, its derived fields, the tag catalog, its
 * events and any dispatch input in one transaction; only tag changes beyond what one
 * transaction holds are applied right after it, each exactly once (core/tags.ts).
 */
import { BusyError, FieldRuleError, ValidationError } from '../errors.js';
import { timeForWrite } from '../platform/deadline.js';
import { isId, newId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatRecord, RewriteField } from '../store/chats-repo.js';
import { decodeCursor, encodeCursor } from '../store/cursor.js';
import { guarded, transact } from '../store/db.js';
import type { TransactItem, TransactWrite } from '../store/db.js';
import { dispatchInputWrites, recordUserTyping } from '../store/dispatch-repo.js';
import { ephemeralEventPut, landEphemeral, withEventNumbers, withEvents } from '../store/events-repo.js';
import type { NewEvent } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import { putMessage, streamActivity } from '../store/messages-repo.js';
import type { MessageRecord } from '../store/messages-repo.js';
import { TRANSACTION_MAX_ITEMS, catalogWrites } from '../store/tags-repo.js';
import type { CatalogPart } from '../store/tags-repo.js';
import { DEFAULT_CHAT_TITLE, USER_SENDER_ID, cut, previewOf, recomputedPreviewOf } from '../model.js';
import type { Chat, Message } from '../model.js';
import { chatNotFound } from './chat-writes.js';
import * as Dispatch from './dispatch.js';
import * as StreamText from './stream-text.js';
import * as Tags from './tags.js';
import { MAX_CONTENT_BYTES, tooLong } from './streaming.js';

export interface ChatDeps {
  clock: () => Date;
  newId: () => string;
}
export const defaultDeps: ChatDeps = { clock: () => new Date(), newId };

/**
 * Bounds far above real use, set by storage: a tag is part of a catalog key (at most 1 KB),
 * hence its size cap; the tags live in the chat item (at most 400 KB, and every message
 * write rewrites it), hence the total; and a PATCH replacing 1,000 tags by 1,000 others
 * makes 2,000 catalog adjustments, about 20 catalog parts, which its transaction still holds.
 */
export const MAX_TAGS = 1000;
export const MAX_TAG_BYTES = 400;
export const MAX_TAGS_TOTAL_BYTES = 100_000;
/**
 * How long a rewrite keeps trying when other writes keep changing what it computed from: a time
 * budget rather than a count of attempts; with the last attempt (and its transaction's conflict
 * retries, db.ts) it stays inside a function's 15 s. Past it the client
 * gets 429 with Retry-After (README, "Busy chats").
 */
const REWRITE_BUDGET_MS = 8_000;
/**
 * A rewrite that lost a race takes the chat's write turn before trying again (Chats.takeWriteTurn),
 * so many writers of one chat go one after the other instead of failing each other's attempts
 * over and over. A turn lasts this long at most (its holder normally gives it back at once).
 */
const WRITE_TURN_MS = 3_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waiting for the turn: polls with jittered exponential backoff, 20 ms to 1 s. */
const turnBackoff = (n: number) => sleep(Math.random() * Math.min(1000, 20 * 2 ** n));

/** The chat 404 (defined with the low-level chat writes, which sit below this module). */
export { chatNotFound };

/** The chat, or 404 `Chat not found.` (also for a malformed id). */
export async function existingChat(chatId: string): Promise<ChatRecord> {
  const chat = isId(chatId) ? await Chats.getChat(chatId) : undefined;
  if (!chat) throw chatNotFound(chatId);
  return chat;
}

/** What a message takes from its chat. */
export type ChatFacts = Pick<ChatRecord, 'id' | 'model_id' | 'pinned'>;

const facts = new Map<string, ChatFacts>();
const MAX_FACTS = 10_000;

/**
 * A chat's model and pinned flag as this container last saw them, read (with the 404) only the
 * first time: a warm function writes a message without reading its chat. Chats are never
 * deleted, and the message's transaction is conditioned on both values (Chats.recordActivity:
 * `pinned` and `modelId`), so a stale entry costs a retry (see rememberChatFacts), never a
 * wrong write.
 */
export async function chatFacts(chatId: string): Promise<ChatFacts> {
  const known = facts.get(chatId);
  if (known) return known;
  const chat = await existingChat(chatId);
  rememberChatFacts(chat);
  return facts.get(chatId)!;
}

export function rememberChatFacts(chat: ChatFacts): void {
  if (facts.size >= MAX_FACTS) facts.clear();
  facts.set(chat.id, { id: chat.id, model_id: chat.model_id, pinned: chat.pinned });
}

/** Trimmed, empty dropped, duplicates removed keeping the first occurrence (§2.1). */
export function normalizeTags(tags: readonly string[]): string[] {
  const out = [...new Set(tags.map((t) => t.trim()).filter((t) => t !== ''))];
  if (out.length > MAX_TAGS) throw new FieldRuleError('tags', `tags must contain at most ${MAX_TAGS} distinct tags.`);
  const sizes = out.map((t) => Buffer.byteLength(t, 'utf8'));
  if (sizes.some((n) => n > MAX_TAG_BYTES))
    throw new FieldRuleError('tags', `Each tag must be at most ${MAX_TAG_BYTES} bytes.`);
  if (sizes.reduce((a, b) => a + b, 0) > MAX_TAGS_TOTAL_BYTES) {
    throw new FieldRuleError('tags', `tags must total at most ${MAX_TAGS_TOTAL_BYTES} bytes.`);
  }
  return out;
}

function checkModel(config: InstanceConfig, modelId: string): void {
  if (!config.models.some((m) => m.id === modelId)) {
    throw new FieldRuleError('modelId', 'modelId must match a configured model id.');
  }
}

function checkTitle(title: string, config: InstanceConfig): string {
  const trimmed = title.trim();
  if (trimmed === '') throw new FieldRuleError('title', 'title cannot be empty.');
  return cut(trimmed, config.titleMaxChars);
}

export interface NewChat {
  agentIds: string[];
  /** Absent: the model resolved by defaultModelFor (§5.3.1, since 2026-11). */
  modelId?: string | undefined;
  title?: string | undefined;
  tags?: string[] | undefined;
  firstMessage?: string | undefined;
}

/**
 * The model of a chat created without `modelId` (§5.3.1): the first of the chat's first agent's
 * `defaultModelId`, `defaultModelIdForNewChats` and the first configured model that is set. The
 * caller still checks it is a configured model.
 */
function defaultModelFor(config: InstanceConfig, agentIds: readonly string[]): string | undefined {
  const firstAgent = config.agents.find((a) => a.id === agentIds[0]);
  return firstAgent?.defaultModelId ?? config.defaultModelIdForNewChats ?? config.models[0]?.id;
}

/**
 * Creates a chat (§5.3.1):
 * 1. rule checks in the contract's order (model, agents, title);
 * 2. the chat, its optional first message (+ pointer, + dispatch input), the tag counts and
 *    the events `chat.created` then `message.created`, in one transaction;
 * 3. tag counts that did not fit in it (catalog parts), applied once it has committed.
 */
export async function create(
  config: InstanceConfig,
  input: NewChat,
  keyed?: KeyedReply,
  deps: ChatDeps = defaultDeps,
): Promise<Chat> {
  const modelId = input.modelId ?? defaultModelFor(config, input.agentIds) ?? '';
  checkModel(config, modelId);
  if (input.agentIds.length === 0) throw new FieldRuleError('agentIds', 'agentIds must contain at least one agent id.');
  const unknownAgent = input.agentIds.find((id) => !config.agents.some((a) => a.id === id));
  if (unknownAgent !== undefined) {
    throw new FieldRuleError('agentIds', 'agentIds contains unknown id.', { agentId: unknownAgent });
  }
  const manualTitle = input.title === undefined ? undefined : checkTitle(input.title, config);
  const tags = normalizeTags(input.tags ?? []);

  const now = deps.clock().toISOString();
  const chatId = deps.newId();
  const firstText = firstMessageText(input);
  // The first message is a message: the same bound and the same 413 as POST …/messages (§5.4.1).
  if (Buffer.byteLength(firstText, 'utf8') > MAX_CONTENT_BYTES) throw tooLong('firstMessage');
  const derivedTitle = cut(firstText.replace(/\s+/g, ' ').trim(), config.titleMaxChars);
  const first: Message | undefined =
    firstText === ''
      ? undefined
      : {
          id: deps.newId(),
          chat_id: chatId,
          role: 'user',
          sender_id: USER_SENDER_ID,
          created_at: now,
          updated_at: now,
          content_final: firstText,
          content_partial: null,
          stream_state: 'complete',
          model_id: modelId,
          trace: null,
        };

  const chat: ChatRecord = {
    id: chatId,
    is_archived: false,
    title: manualTitle ?? (derivedTitle || DEFAULT_CHAT_TITLE),
    title_source: manualTitle === undefined ? 'default' : 'manual',
    tags,
    pinned: false,
    agent_ids: input.agentIds,
    model_id: modelId,
    last_message_preview: first ? previewOf(first) : null,
    last_message_role: first ? 'user' : null,
    pending_requests_count: 0,
    last_read_at: now,
    unread_count: 0,
    notifications_muted: false,
    created_at: now,
    updated_at: now,
    last_message_at: first ? now : null,
    ver: 1,
    non_user_message_count: 0,
  };

  const events: NewEvent[] = [{ type: 'chat.created', payload: { chatId } }];
  const items: TransactItem[] = [Chats.putNewChat(chat)];
  if (first) {
    events.push({
      type: 'message.created',
      payload: {
        chatId,
        messageId: first.id,
        role: 'user',
        senderId: USER_SENDER_ID,
        streamState: 'complete',
        contentFinal: first.content_final,
        createdAt: now,
      },
    });
    items.push(
      ...putMessage(first),
      ...dispatchInputWrites({
        id: deps.newId(),
        chat_id: chatId,
        source_kind: 'user_message',
        source_id: first.id,
        sender_id: USER_SENDER_ID,
        content: firstText,
        media_ids: [],
        state: 'pending',
        created_at: now,
      }),
    );
  }
  const result = Chats.toChat(chat);
  // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
  const completion = completionInTransaction(keyed, result);
  const catalog = catalogWrites(
    Tags.adjustmentsBetween([], tags),
    TRANSACTION_MAX_ITEMS - items.length - completion.length - events.length,
    deps.newId(),
    now,
  );
  await withEvents(events, now, (eventItems) => transact([...items, ...completion, ...catalog.items, ...eventItems]));
  await Tags.applyParts(catalog.parts);
  // A first message is a user message, hence a dispatch input (§4.4.1).
  if (first) await Dispatch.inputAdded(config, chatId);
  return result;
}

/**
 * The first message's dispatch signal, redone for a replayed create (http() afterReplay): a
 * crash between the commit and the signal would have skipped it; a second signal finds nothing
 * left to seal. Never throws.
 */
export async function redoAfterCreate(config: InstanceConfig, created: Chat, input: NewChat): Promise<void> {
  if (firstMessageText(input) !== '') await Dispatch.inputAdded(config, created.id);
}

/** A new chat's first message as stored: trimmed; empty means none. */
const firstMessageText = (input: NewChat): string => input.firstMessage?.trim() ?? '';

export async function get(chatId: string): Promise<Chat> {
  const [chat] = await withStreamActivity([await existingChat(chatId)]);
  return chat!;
}

/**
 * The chats as the API shows them: a chunk sets its chat's updated_at to its time (§5.4.3) by
 * moving only its message's updated_at (a chunk does not write the chat item, whose gsi1 and
 * gsi2 copies would triple the cost), so a chat with open streams shows the latest of its own
 * updated_at and its streaming messages'. Costs nothing for chats without open streams, else
 * one BatchGetItem for the whole page (1 RRU per streaming message, strongly consistent).
 */
async function withStreamActivity(chats: readonly ChatRecord[]): Promise<Chat[]> {
  const streams = chats.flatMap((c) => [...(c.open_streams ?? [])].map((sk) => ({ chatId: c.id, sk })));
  const activity = streams.length > 0 ? await streamActivity(streams) : new Map<string, string>();
  return chats.map((c) => {
    const chat = Chats.toChat(c);
    for (const sk of c.open_streams ?? []) {
      const at = activity.get(sk);
      if (at !== undefined && at > chat.updated_at) chat.updated_at = at;
    }
    return chat;
  });
}

export interface ChatListQuery {
  cursor?: string | undefined;
  limit: number;
  archived?: boolean | undefined;
  tag?: string | undefined;
  agentId?: string | undefined;
  query?: string | undefined;
}

export interface Page<T> {
  data: T[];
  cursor: { next: string | null; hasMore: boolean };
}

/** Lists chats in the §1.9 order with keyset cursors. Empty filters mean no filter (§5.3.2). */
export async function list(q: ChatListQuery): Promise<Page<Chat>> {
  const listName = `chats:${q.archived === undefined ? 'all' : q.archived ? 'archived' : 'active'}`;
  let after: { sortKey: string; chatId: string } | undefined;
  if (q.cursor !== undefined) {
    const position = await decodeCursor(listName, q.cursor);
    if (typeof position.s !== 'string' || typeof position.id !== 'string')
      throw new FieldRuleError('cursor', 'Invalid cursor value.');
    after = { sortKey: position.s, chatId: position.id };
  }
  const page = await Chats.queryChats({
    archived: q.archived,
    tag: q.tag || undefined,
    agentId: q.agentId || undefined,
    titleContains: q.query ? q.query.toLowerCase() : undefined,
    limit: q.limit,
    after,
  });
  const last = page.chats.at(-1);
  const next = page.hasMore && last ? await encodeCursor(listName, { s: page.sortKeyOf(last), id: last.id }) : null;
  return { data: await withStreamActivity(page.chats), cursor: { next, hasMore: next !== null } };
}

/**
 * The full recompute of §3.3 over a chat that is about to be written: newest-message fields
 * from the two newest messages, unread count from the messages after last_read_at.
 * Costs one Query of 2 items, plus, only when the newest message is after last_read_at (or
 * last_read_at is unset), one counting Query over the unread messages: a mark-read, whose
 * last_read_at is now, normally needs none.
 */
async function recompute(chat: ChatRecord, readAlongside?: MessageRecord[]): Promise<void> {
  const newestTwo =
    readAlongside && agreesWith(chat, readAlongside) ? readAlongside : await Chats.newestMessages(chat.id, 2);
  const lastReadAt = chat.last_read_at;
  const unread =
    lastReadAt === null
      ? chat.non_user_message_count
      : newestTwo.length === 0 || newestTwo[0]!.created_at <= lastReadAt
        ? 0
        : await Chats.countNonUserMessagesAfter(chat.id, lastReadAt);
  Object.assign(chat, lastMessageFields(await Promise.all(newestTwo.map(withStreamedText))));
  chat.unread_count = unread;
}

/** §3.3's newest-message fields from the two newest messages (newest first). */
function lastMessageFields([newest, second]: MessageRecord[]) {
  const newestPreview = newest ? recomputedPreviewOf(newest) : null;
  return {
    last_message_at: newest ? newest.created_at : null,
    last_message_preview: newestPreview ?? (second ? recomputedPreviewOf(second) : null),
    last_message_role: !newest ? null : newestPreview !== null || !second ? newest.role : second.role,
  };
}

/**
 * Whether the newest messages read alongside the chat (not after it) are the ones the chat
 * describes: its last message's time, preview and role as they would be recomputed. A message
 * that landed between the two reads makes them disagree (it moves the chat's last_message_at
 * in its own transaction), and the messages are then read again; if it landed after both,
 * the rewrite's condition on the chat fails and the attempt starts over, as before. Streaming
 * messages (whose text lives in their chunks) are always read again.
 *
 * The time agrees in two ways: the newest message's creation (what the recompute writes), or
 * its completion, which is where a stream's completion put the chat's last_message_at (§5.4.4,
 * the same instant as the message's updated_at, in the same transaction) until the next
 * recompute: the first rewrite after every streamed reply (the user reading it) is such a case.
 */
function agreesWith(chat: ChatRecord, newestTwo: MessageRecord[]): boolean {
  if (newestTwo.some((m) => m.stream_state === 'streaming')) return false;
  const fields = lastMessageFields(newestTwo);
  const newest = newestTwo[0];
  const timeAgrees =
    chat.last_message_at === fields.last_message_at ||
    (newest?.stream_state === 'complete' && chat.last_message_at === newest.updated_at);
  return (
    timeAgrees &&
    chat.last_message_preview === fields.last_message_preview &&
    chat.last_message_role === fields.last_message_role
  );
}

/**
 * A streaming message's text lives in its chunk items until it ends; the recompute sees it
 * as content_partial, as the contract's model has it.
 */
async function withStreamedText(message: MessageRecord): Promise<MessageRecord> {
  if (message.stream_state !== 'streaming' || !message.chunk_count) return message;
  return { ...message, content_partial: await StreamText.partialText(message.id, message.chunk_count) };
}

interface ChatChange {
  events: NewEvent[];
  /** The fields the request sets on `next` itself (see Chats.rewriteChat). */
  sets: RewriteField[];
  /** More items for the transaction, beside the chat and the events. */
  extra?: TransactItem[];
  /** Catalog parts to apply once the transaction has committed (catalogWrites). */
  parts?: CatalogPart[];
  after?: (c: ChatRecord) => void;
  /** Only while the title is still the default one (auto-rename). */
  whileTitleDefault?: boolean;
}

/**
 * Reads a chat, applies `change`, recomputes its derived fields and writes back what it decided
 * with its events (Chats.rewriteChat): the request's fields and the recomputed ones, conditioned
 * only on what they were computed from. Concurrent rewrites of one chat therefore commute (a
 * hundred mark-reads or PATCHes of other fields all land on their first attempt); a write that
 * changed the inputs (a new message, a mark-read under a PATCH's recompute, another tag
 * replacement) fails the condition, and the whole step is redone on fresh data, so no update is
 * lost. From the third attempt on the writer first waits for the chat's write turn. Should the
 * chat stay that contended for REWRITE_BUDGET_MS, the rewrite gives up with 429 and Retry-After
 * (BusyError), having changed nothing. Catalog parts of the attempt that committed are applied last.
 */
async function rewrite(
  chatId: string,
  deps: ChatDeps,
  keyed: KeyedReply | undefined,
  change: (chat: ChatRecord, now: string) => ChatChange,
): Promise<ChatRecord> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  let parts: CatalogPart[] = [];
  const started = Date.now();
  const owner = deps.newId();
  let turn = false;
  // The event numbers are taken once and reused by every attempt (a retry leaves no hole).
  const written = await withEventNumbers(async (take) => {
    for (let attempt = 1; ; attempt++) {
      // Rewrites commute, so a retry (after a message landed meanwhile) normally lands at once;
      // writers that keep losing (tag replacements racing each other) take turns.
      if (attempt > 2 && !turn) {
        for (let n = 0; !turn && Date.now() - started < REWRITE_BUDGET_MS && timeForWrite(); n++) {
          turn = await Chats.takeWriteTurn(chatId, owner, Date.now(), WRITE_TURN_MS);
          if (!turn) await turnBackoff(n);
        }
      }
      if (Date.now() - started >= REWRITE_BUDGET_MS || !timeForWrite()) throw new BusyError();
      // The chat and its newest messages side by side: one round trip (recompute checks they agree).
      const [read, newestTwo] = await Promise.all([Chats.getChat(chatId), Chats.newestMessages(chatId, 2)]);
      if (!read) throw chatNotFound(chatId);
      const now = deps.clock().toISOString();
      const next: ChatRecord = { ...read, updated_at: now };
      const { events, sets, extra = [], after, parts: attemptParts = [], whileTitleDefault } = change(next, now);
      await recompute(next, newestTwo);
      after?.(next);
      const reservation = await take(events.length);
      let stale = false;
      const write = guarded(Chats.rewriteChat({ read, next, sets, whileTitleDefault }), () => {
        stale = true;
        return undefined;
      });
      // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
      const completion = completionInTransaction(keyed, Chats.toChat(next));
      await transact([write, ...extra, ...completion, ...reservation.items(events, now)]).catch((error: unknown) => {
        if (!stale) throw error;
      });
      if (!stale) {
        parts = attemptParts;
        return next;
      }
      // Holding the turn, only a writer on its first attempt can beat us: try again soon.
      await sleep(Math.random() * (turn ? 10 : 50));
    }
  }).finally(async () => {
    if (turn) await Chats.endWriteTurn(chatId, owner).catch(() => undefined);
  });
  await Tags.applyParts(parts);
  return written;
}

export interface ChatUpdate {
  title?: string | undefined;
  titleAutoRenamed?: boolean | undefined;
  tags?: string[] | undefined;
  pinned?: boolean | undefined;
  modelId?: string | undefined;
  notificationsMuted?: boolean | undefined;
}

/** PATCH /chats/{id} (§5.3.4): rule checks, then the rewrite with tag catalog adjustments. */
export async function update(
  config: InstanceConfig,
  chatId: string,
  input: ChatUpdate,
  keyed?: KeyedReply,
  deps: ChatDeps = defaultDeps,
): Promise<Chat> {
  const { title, tags, pinned, modelId, notificationsMuted } = input;
  if ([title, tags, pinned, modelId, notificationsMuted].every((v) => v === undefined)) {
    throw new ValidationError('At least one updatable field is required.');
  }
  const newTitle = title === undefined ? undefined : checkTitle(title, config);
  if (modelId !== undefined) checkModel(config, modelId);
  const newTags = tags === undefined ? undefined : normalizeTags(tags);

  const sets: RewriteField[] = [];
  if (newTitle !== undefined) sets.push('title');
  if (newTags !== undefined) sets.push('tags');
  if (pinned !== undefined) sets.push('pinned');
  if (modelId !== undefined) sets.push('model_id');
  if (notificationsMuted !== undefined) sets.push('notifications_muted');
  const chat = await rewrite(chatId, deps, keyed, (next, now) => {
    const events: NewEvent[] = [{ type: 'chat.updated', payload: { chatId: next.id } }];
    let catalog: { items: TransactItem[]; parts: CatalogPart[] } = { items: [], parts: [] };
    if (newTitle !== undefined) {
      next.title = newTitle;
      next.title_source = input.titleAutoRenamed === true ? 'auto' : 'manual';
    }
    if (newTags !== undefined) {
      // Beside the chat and its event; a new change id per attempt (an uncommitted attempt leaves no part).
      catalog = catalogWrites(
        Tags.adjustmentsBetween(next.tags, newTags),
        // the chat, the events and the Idempotency-Key's completion
        TRANSACTION_MAX_ITEMS - 2 - events.length,
        deps.newId(),
        now,
      );
      next.tags = newTags;
    }
    if (pinned !== undefined) next.pinned = pinned;
    if (modelId !== undefined) next.model_id = modelId;
    if (notificationsMuted !== undefined) next.notifications_muted = notificationsMuted;
    return { events, sets, extra: catalog.items, parts: catalog.parts };
  });
  return Chats.toChat(chat);
}

/** Thrown inside a rewrite when the chat's title is no longer auto-renamable. */
class TitleNotDefault extends Error {}

/**
 * Auto-rename's write (§10.4): applied exactly like PATCH with `{ title, titleAutoRenamed: true }`
 * (titleMaxChars cut, title_source `auto`, updated_at, full recompute, `chat.updated`), but only
 * while the chat's title_source is `default`. The rewrite checks it on the chat it read and
 * conditions its write on it, so a title set in between fails the condition, and the re-read
 * sees it and gives up: a manual title is never overwritten, and the event numbers taken are
 * voided. Answers the renamed chat, or undefined.
 */
export async function applyAutoTitle(
  config: InstanceConfig,
  chatId: string,
  title: string,
  deps: ChatDeps = defaultDeps,
): Promise<Chat | undefined> {
  const newTitle = checkTitle(title, config);
  try {
    const chat = await rewrite(chatId, deps, undefined, (next) => {
      if (next.title_source !== 'default') throw new TitleNotDefault();
      next.title = newTitle;
      next.title_source = 'auto';
      return {
        events: [{ type: 'chat.updated', payload: { chatId: next.id } }],
        sets: ['title'],
        whileTitleDefault: true,
      };
    });
    return Chats.toChat(chat);
  } catch (error) {
    if (error instanceof TitleNotDefault) return undefined;
    throw error;
  }
}

/** Archive or unarchive (§4.1): idempotent in state, but always bumps updated_at and emits. */
export async function setArchived(
  chatId: string,
  archived: boolean,
  keyed?: KeyedReply,
  deps: ChatDeps = defaultDeps,
): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  await withEvents([{ type: archived ? 'chat.archived' : 'chat.unarchived', payload: { chatId } }], now, (items) =>
    transact([
      guarded(Chats.setArchived(chatId, archived, now), () => chatNotFound(chatId)),
      ...completionInTransaction(keyed, undefined),
      ...items,
    ]),
  );
}

/** mark-read (§3.4): last_read_at = now, then the full recompute. */
export async function markRead(chatId: string, keyed?: KeyedReply, deps: ChatDeps = defaultDeps): Promise<void> {
  await rewrite(chatId, deps, keyed, (next, now) => {
    next.last_read_at = now;
    return { events: [{ type: 'chat.read', payload: { chatId } }], sets: ['last_read_at'] };
  });
}

/** mark-unread (§3.4): last_read_at = null, recompute, then unread_count forced to 1. */
export async function markUnread(chatId: string, keyed?: KeyedReply, deps: ChatDeps = defaultDeps): Promise<void> {
  await rewrite(chatId, deps, keyed, (next) => {
    next.last_read_at = null;
    return {
      events: [{ type: 'chat.unread', payload: { chatId } }],
      sets: ['last_read_at'],
      after: (c) => {
        c.unread_count = 1;
      },
    };
  });
}

export interface UnreadSummary {
  total_unread: number;
  unread_by_agent: Record<string, number>;
}

/** §3.5 over the chats that may need attention (the others contribute zero). */
export async function unreadSummary(archived: boolean | undefined): Promise<UnreadSummary> {
  const entries = (await Chats.chatsNeedingAttention()).filter(
    (e) => archived === undefined || e.is_archived === archived,
  );
  const byAgent: Record<string, number> = {};
  let total = 0;
  for (const e of entries) {
    const unread = Math.max(0, e.unread_count);
    total += unread;
    if (unread === 0) continue;
    for (const agent of new Set(e.agent_ids)) byAgent[agent] = (byAgent[agent] ?? 0) + unread;
  }
  return { total_unread: Math.max(0, total), unread_by_agent: byAgent };
}

export async function pendingSummary(archived: boolean | undefined): Promise<{ pending_requests_total: number }> {
  const entries = (await Chats.chatsNeedingAttention()).filter(
    (e) => archived === undefined || e.is_archived === archived,
  );
  const total = entries.reduce((sum, e) => sum + Math.max(0, e.pending_requests_count), 0);
  return { pending_requests_total: Math.max(0, total) };
}

// ---------------------------------------------------------------------------------------
// Typing
// ---------------------------------------------------------------------------------------

/** POST /chats/{chatId}/typing (§5.3.8): an ephemeral `chat.typing`; nothing stored. */
export async function agentTyping(chatId: string, agentId: string, deps: ChatDeps = defaultDeps): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const event = ephemeralEventPut({ type: 'chat.typing', payload: { chatId, agentId } }, now);
  await transact([guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)), event]);
  await landEphemeral(event);
}

/**
 * POST /chats/{chatId}/user-typing (§5.3.9): an ephemeral `chat.user_typing`; in
 * batched_sequential mode also the time, for the dispatch typing grace (§4.4.3).
 */
export async function userTyping(config: InstanceConfig, chatId: string, deps: ChatDeps = defaultDeps): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const event = ephemeralEventPut({ type: 'chat.user_typing', payload: { chatId, senderId: USER_SENDER_ID } }, now);
  const items: TransactWrite[] = [guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)), event];
  if (config.server.dispatch.mode === 'batched_sequential') items.push(recordUserTyping(chatId, now));
  await transact(items);
  await landEphemeral(event);
}
