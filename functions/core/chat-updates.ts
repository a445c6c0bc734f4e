/**
 * Changing an existing chat (§3.4, §4.1, §5.3.4, §10.4): PATCH, auto-rename's title, archive
 * and unarchive, mark-read and mark-unread. All but archiving go through the rewrite with its
 * full recompute (chat-recompute.ts); archiving touches no derived field and writes blind.
 */
import { ValidationError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import { NO_DEADLINE } from '../platform/deadline.js';
import { isId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { RewriteField } from '../store/chat-recompute-repo.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import type { TransactItem } from '../store/db.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import { TRANSACTION_MAX_ITEMS, catalogWrites } from '../store/tags-repo.js';
import type { CatalogPart } from '../store/tags-repo.js';
import type { Chat } from '../model.js';
import { EVENTS } from '../model/events.js';
import type { NewPersistedEvent } from '../model/events.js';
import { chatNotFound } from './chat-lookup.js';
import { rewrite } from './chat-recompute.js';
import { checkModel, checkTitle, normalizeTags } from './chat-rules.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import * as Tags from './tags.js';

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
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
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
  const chat = await rewrite(chatId, deps, keyed, deadline, (next, now) => {
    const events: NewPersistedEvent[] = [EVENTS.chatUpdated.of({ chatId: next.id })];
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
 * voided. Answers the renamed chat, or undefined. Auto-rename is a job (it follows the table's
 * stream): no deadline.
 */
export async function applyAutoTitle(
  config: InstanceConfig,
  chatId: string,
  title: string,
  deps: Deps = defaultDeps,
): Promise<Chat | undefined> {
  const newTitle = checkTitle(title, config);
  try {
    const chat = await rewrite(chatId, deps, undefined, NO_DEADLINE, (next) => {
      if (next.title_source !== 'default') throw new TitleNotDefault();
      next.title = newTitle;
      next.title_source = 'auto';
      return {
        events: [EVENTS.chatUpdated.of({ chatId: next.id })],
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
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const event = (archived ? EVENTS.chatArchived : EVENTS.chatUnarchived).of({ chatId });
  await withEvents([event], now, (items) =>
    transact(
      [
        guarded(Chats.setArchived(chatId, archived, now), () => chatNotFound(chatId)),
        ...completionInTransaction(keyed, undefined),
        ...items,
      ],
      deadline,
    ),
  );
}

/** mark-read (§3.4): last_read_at = now, then the full recompute. */
export async function markRead(
  chatId: string,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<void> {
  await rewrite(chatId, deps, keyed, deadline, (next, now) => {
    next.last_read_at = now;
    return { events: [EVENTS.chatRead.of({ chatId })], sets: ['last_read_at'] };
  });
}

/** mark-unread (§3.4): last_read_at = null, recompute, then unread_count forced to 1. */
export async function markUnread(
  chatId: string,
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
): Promise<void> {
  await rewrite(chatId, deps, keyed, deadline, (next) => {
    next.last_read_at = null;
    return {
      events: [EVENTS.chatUnread.of({ chatId })],
      sets: ['last_read_at'],
      after: (c) => {
        c.unread_count = 1;
      },
    };
  });
}
