/**
 * Creating a chat (§5.3.1): the rule checks in the contract's order, then the chat, its
 * optional first message (with its dispatch input), the tag counts and the events in one
 * transaction; tag counts beyond what it holds are applied right after (core/tags.ts).
 */
import { FieldRuleError } from '../errors.js';
import type { Deadline } from '../platform/deadline.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatRecord } from '../store/chats-repo.js';
import { transact } from '../store/db.js';
import type { TransactItem } from '../store/db.js';
import { dispatchInputWrites } from '../store/dispatch/inputs.js';
import { withEvents } from '../store/events-repo.js';
import { completionInTransaction } from '../store/idempotency-repo.js';
import type { KeyedReply } from '../store/idempotency-repo.js';
import { putMessage } from '../store/messages-repo.js';
import { TRANSACTION_MAX_ITEMS, catalogWrites } from '../store/tags-repo.js';
import { DEFAULT_CHAT_TITLE, USER_SENDER_ID, cut, previewOf } from '../model.js';
import type { Chat, Message } from '../model.js';
import { EVENTS } from '../model/events.js';
import type { NewPersistedEvent } from '../model/events.js';
import { checkModel, checkTitle, normalizeTags } from './chat-rules.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';
import { inputAdded } from './dispatch/seal.js';
import { MAX_CONTENT_BYTES, tooLong } from './message-rules.js';
import * as Tags from './tags.js';

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
  deadline: Deadline,
  keyed?: KeyedReply,
  deps: Deps = defaultDeps,
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

  const events: NewPersistedEvent[] = [EVENTS.chatCreated.of({ chatId })];
  const items: TransactItem[] = [Chats.putNewChat(chat)];
  if (first) {
    events.push(
      EVENTS.messageCreated.of({
        chatId,
        messageId: first.id,
        role: 'user',
        senderId: USER_SENDER_ID,
        streamState: 'complete',
        contentFinal: first.content_final,
        createdAt: now,
      }),
    );
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
  await withEvents(events, now, (eventItems) =>
    transact([...items, ...completion, ...catalog.items, ...eventItems], deadline),
  );
  await Tags.applyParts(catalog.parts, deadline);
  // A first message is a user message, hence a dispatch input (§4.4.1).
  if (first) await inputAdded(config, chatId, deadline);
  return result;
}

/**
 * The first message's dispatch signal, redone for a replayed create (http() afterReplay): a
 * crash between the commit and the signal would have skipped it; a second signal finds nothing
 * left to seal. Never throws.
 */
export async function redoAfterCreate(
  config: InstanceConfig,
  created: Chat,
  input: NewChat,
  deadline: Deadline,
): Promise<void> {
  if (firstMessageText(input) !== '') await inputAdded(config, created.id, deadline);
}

/** A new chat's first message as stored: trimmed; empty means none. */
const firstMessageText = (input: NewChat): string => input.firstMessage?.trim() ?? '';
