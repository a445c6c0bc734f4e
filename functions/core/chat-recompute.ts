/**
 * The chat rewrite every change of an existing chat's fields goes through (PATCH, mark-read,
 * mark-unread, auto-rename; chat-updates.ts): read the chat, apply the change, redo the full
 * recompute of its derived fields (§3.3) and write back only what was decided, conditioned on
 * what it was computed from (store/chat-recompute-repo.ts). A rewrite that lost a race is redone
 * on fresh data, taking the chat's write turn after two losses, within a time budget.
 * (A message's own effect on its chat is incremental, not a rewrite: chat-activity.ts.)
 */
import { BusyError } from '../errors.js';
import { timeForWrite } from '../platform/deadline.js';
import type { Deadline } from '../platform/deadline.js';
import { isId } from '../platform/ids.js';
import { backoff, retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import {
  countNonUserMessagesAfter,
  endWriteTurn,
  newestMessages,
  rewriteChat,
  takeWriteTurn,
} from '../store/chat-recompute-repo.js';
import type { RewriteField } from '../store/chat-recompute-repo.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatRecord } from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import type { TransactItem } from '../store/db.js';
import { withEventNumbers } from '../store/events-repo.js';
import type { EventReservation } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import type { MessageRecord } from '../store/messages-repo.js';
import type { CatalogPart } from '../store/tags-repo.js';
import { recomputedPreviewOf } from '../model.js';
import type { NewPersistedEvent } from '../model/events.js';
import { chatNotFound } from './chat-lookup.js';
import type { Deps } from './deps.js';
import * as StreamText from './stream-text.js';
import * as Tags from './tags.js';

/**
 * How long a rewrite keeps trying when other writes keep changing what it computed from: a time
 * budget rather than a count of attempts; with the last attempt (and its transaction's conflict
 * retries, db.ts) it stays inside a function's 15 s. Past it the client
 * gets 429 with Retry-After (docs/architecture.md, "Busy chats").
 */
const REWRITE_BUDGET_MS = 8_000;
/**
 * A rewrite that lost a race takes the chat's write turn before trying again (takeWriteTurn),
 * so many writers of one chat go one after the other instead of failing each other's attempts
 * over and over. A turn lasts this long at most (its holder normally gives it back at once).
 */
const WRITE_TURN_MS = 3_000;
/** Attempts that may go without the write turn: rewrites commute, so a retry normally lands at once. */
const ATTEMPTS_BEFORE_TURN = 2;

/**
 * Redoing an attempt that went stale (a concurrent write changed its inputs; nothing written):
 * no count of attempts, only REWRITE_BUDGET_MS, checked as each attempt starts (inBudget). The
 * pause is short and random: up to 10 ms while holding the turn (only a writer on its first
 * attempt can beat us), else up to 50 ms.
 */
const staleAttempts = (turn: WriteTurn): RetryPolicy<Written | undefined> => ({
  attempts: Infinity,
  backoff: (tries) => backoff.upTo(turn.held() ? 10 : 50)(tries),
  retryResult: (written) => written === undefined,
});

/**
 * Waiting for the chat's write turn: polls with jittered exponential backoff, 20 ms to 1 s, as
 * long as the rewrite is in its budget (the turn is never waited for past it).
 */
const turnPolls = (inBudget: () => boolean): RetryPolicy<boolean> => ({
  attempts: Infinity,
  backoff: backoff.fullJitter(20, 1000),
  retryResult: (taken) => !taken,
  mayRetry: inBudget,
});

/**
 * The full recompute of §3.3 over a chat that is about to be written: newest-message fields
 * from the two newest messages, unread count from the messages after last_read_at.
 * Costs one Query of 2 items, plus, only when the newest message is after last_read_at (or
 * last_read_at is unset), one counting Query over the unread messages: a mark-read, whose
 * last_read_at is now, normally needs none.
 */
async function recompute(chat: ChatRecord, readAlongside?: MessageRecord[]): Promise<void> {
  const newestTwo = readAlongside && agreesWith(chat, readAlongside) ? readAlongside : await newestMessages(chat.id, 2);
  const lastReadAt = chat.last_read_at;
  const unread =
    lastReadAt === null
      ? chat.non_user_message_count
      : newestTwo.length === 0 || newestTwo[0]!.created_at <= lastReadAt
        ? 0
        : await countNonUserMessagesAfter(chat.id, lastReadAt);
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

export interface ChatChange {
  events: NewPersistedEvent[];
  /** The fields the request sets on `next` itself (see rewriteChat). */
  sets: RewriteField[];
  /** More items for the transaction, beside the chat and the events. */
  extra?: TransactItem[];
  /** Catalog parts to apply once the transaction has committed (catalogWrites). */
  parts?: CatalogPart[];
  after?: (c: ChatRecord) => void;
  /** Only while the title is still the default one (auto-rename). */
  whileTitleDefault?: boolean;
}

/** What an attempt that committed leaves: the chat as written, and its catalog parts to apply. */
interface Written {
  chat: ChatRecord;
  parts: CatalogPart[];
}

/**
 * Reads a chat, applies `change`, recomputes its derived fields and writes back what it decided
 * with its events (rewriteChat): the request's fields and the recomputed ones, conditioned
 * only on what they were computed from. Concurrent rewrites of one chat therefore commute (a
 * hundred mark-reads or PATCHes of other fields all land on their first attempt); a write that
 * changed the inputs (a new message, a mark-read under a PATCH's recompute, another tag
 * replacement) fails the condition, and the whole step is redone on fresh data, so no update is
 * lost. From the third attempt on the writer first waits for the chat's write turn. Should the
 * chat stay that contended for REWRITE_BUDGET_MS (or past the time for writes before `deadline`),
 * the rewrite gives up with 429 and Retry-After (BusyError), having changed nothing. Catalog parts
 * of the attempt that committed are applied last.
 */
export async function rewrite(
  chatId: string,
  deps: Deps,
  keyed: KeyedReply | undefined,
  deadline: Deadline,
  change: (chat: ChatRecord, now: string) => ChatChange,
): Promise<ChatRecord> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const started = Date.now();
  const inBudget = () => Date.now() - started < REWRITE_BUDGET_MS && timeForWrite(deadline);
  const turn = writeTurn(chatId, deps.newId(), inBudget);
  // The event numbers are taken once and reused by every attempt (a retry leaves no hole).
  const written = await withEventNumbers((take) =>
    retry(staleAttempts(turn), async (attempt) => {
      // Writers that keep losing (tag replacements racing each other) take turns.
      if (attempt > ATTEMPTS_BEFORE_TURN) await turn.take();
      if (!inBudget()) throw new BusyError();
      return attemptRewrite(chatId, deps, keyed, deadline, change, take);
    }),
  ).finally(() => turn.giveBack());
  // staleAttempts ends only on an attempt that committed (or an error).
  await Tags.applyParts(written!.parts, deadline);
  return written!.chat;
}

/**
 * One attempt: the chat and its newest messages read side by side (one round trip; recompute
 * checks they agree), the change, the recompute, and one transaction conditioned on what was
 * read. Undefined when a concurrent write changed those inputs: nothing was written.
 */
async function attemptRewrite(
  chatId: string,
  deps: Deps,
  keyed: KeyedReply | undefined,
  deadline: Deadline,
  change: (chat: ChatRecord, now: string) => ChatChange,
  take: (count: number) => Promise<EventReservation>,
): Promise<Written | undefined> {
  const [read, newestTwo] = await Promise.all([Chats.getChat(chatId), newestMessages(chatId, 2)]);
  if (!read) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const next: ChatRecord = { ...read, updated_at: now };
  const { events, sets, extra = [], after, parts = [], whileTitleDefault } = change(next, now);
  await recompute(next, newestTwo);
  after?.(next);
  const reservation = await take(events.length);
  let stale = false;
  const write = guarded(rewriteChat({ read, next, sets, whileTitleDefault }), () => {
    stale = true;
    return undefined;
  });
  // With an Idempotency-Key, the reply is stored in the same transaction (issue 17 finding 6).
  const completion = completionInTransaction(keyed, Chats.toChat(next));
  await transact([write, ...extra, ...completion, ...reservation.items(events, now)], deadline).catch(
    (error: unknown) => {
      if (!stale) throw error;
    },
  );
  return stale ? undefined : { chat: next, parts };
}

interface WriteTurn {
  held: () => boolean;
  /** Waits for the turn (turnPolls) unless held already; left untaken once the budget is over. */
  take: () => Promise<void>;
  /** Gives the turn back if held (never throws: it expires by itself anyway). */
  giveBack: () => Promise<void>;
}

/** One rewrite's hold on the chat's write turn (takeWriteTurn, endWriteTurn). */
function writeTurn(chatId: string, owner: string, inBudget: () => boolean): WriteTurn {
  let held = false;
  return {
    held: () => held,
    take: async () => {
      if (held) return;
      held = await retry(
        turnPolls(inBudget),
        async () => inBudget() && takeWriteTurn(chatId, owner, Date.now(), WRITE_TURN_MS),
      );
    },
    giveBack: async () => {
      if (held) await endWriteTurn(chatId, owner).catch(() => undefined);
    },
  };
}
