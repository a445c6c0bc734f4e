/**
 * A message's effect on its chat, shared by every service that writes messages (messages,
 * streaming, dispatch): commit the chat's activity (the incremental §3.2 update: last message,
 * unread, open streams) together with the caller's items and events, and build a system
 * message. Below the services: it imports none of them, so any may use it. (Changing the
 * chat's own fields, with the full recompute, is chat-recompute.ts.)
 */
import { BusyError } from '../errors.js';
import { PREVIEW_MAX_CHARS, cut } from '../model.js';
import type { Message } from '../model.js';
import { EVENTS } from '../model/events.js';
import type { NewPersistedEvent } from '../model/events.js';
import type { Deadline } from '../platform/deadline.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatActivity, ChatRecord } from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import type { TransactItem, TransactWrite } from '../store/db.js';
import * as Store from '../store/messages-repo.js';
import type { MessageRecord } from '../store/messages-repo.js';
import { chatNotFound } from './chat-lookup.js';

/**
 * A system message's writes (the dispatch terminal failure, §4.4.6): the message, its chat
 * activity (preview, role system, last_message_at, unread + 1) and its `message.created`
 * event, for the caller's transaction (commitTouchingChat). No dispatch input, no push.
 */
export function systemMessage(
  chat: Pick<ChatRecord, 'id' | 'model_id' | 'pinned'>,
  text: string,
  trace: Record<string, unknown>,
  now: Date,
  makeId: () => string,
): { message: Message; items: TransactItem[]; activity: ChatActivity; events: NewPersistedEvent[] } {
  const at = now.toISOString();
  const message: MessageRecord = {
    id: makeId(),
    chat_id: chat.id,
    role: 'system',
    sender_id: 'system',
    created_at: at,
    updated_at: at,
    content_final: text,
    content_partial: null,
    stream_state: 'complete',
    model_id: chat.model_id,
    trace,
  };
  return {
    message: Store.toMessage(message),
    items: Store.putMessage(message),
    activity: {
      now: at,
      pinned: chat.pinned,
      lastMessageAt: at,
      preview: { text: cut(text.trim(), PREVIEW_MAX_CHARS), role: 'system' },
      countsUnread: true,
    },
    events: [
      EVENTS.messageCreated.of({
        chatId: chat.id,
        messageId: message.id,
        role: 'system',
        senderId: 'system',
        streamState: 'complete',
        contentFinal: text,
        createdAt: at,
        trace,
      }),
    ],
  };
}

/**
 * The chat's model changed since the caller read it (ChatActivity.modelId): what the caller
 * built from it (a message's model_id) is stale, so it starts over from `chat`.
 */
export class StaleChat extends Error {
  constructor(readonly chat: ChatRecord) {
    super('The chat changed since it was read.');
  }
}

/**
 * Commits `items` + the chat's activity update + the event items in one transaction. The
 * chat part is conditional (see Chats.recordActivity); when it fails because `pinned` changed
 * or a newer message already set last_message_*, it is adjusted from the chat as it is and
 * the transaction retried with the same event numbers. When the chat's model is not
 * `activity.modelId` any more, StaleChat is thrown. Answers the activity that committed.
 */
export async function commitTouchingChat(
  chatId: string,
  activity: ChatActivity,
  items: TransactWrite[],
  eventItems: TransactWrite[],
  deadline: Deadline,
): Promise<ChatActivity> {
  let current = activity;
  /** The chat as the last failed condition found it: the next attempt adjusts to it. */
  let moved: ChatRecord | undefined;
  return retry(CHAT_MOVED_ON, async () => {
    if (moved) current = adjustedTo(moved, current);
    moved = undefined;
    const touch = guarded(Chats.recordActivity(chatId, current), (old) => {
      moved = old as ChatRecord | undefined;
      return old ? new ChatMovedOn() : chatNotFound(chatId);
    });
    await transact([...items, touch, ...eventItems], deadline);
    return current;
  });
}

/** The chat changed under the activity's condition (pin, newer message): adjust and try again. */
class ChatMovedOn extends Error {}

/**
 * Each retry starts from the chat as the failed condition returned it, so it needs no pause;
 * a chat that keeps moving under this write for 10 tries gets 429: nothing was written, the
 * client may retry.
 */
const CHAT_MOVED_ON: RetryPolicy = {
  attempts: 10,
  backoff: () => 0,
  retryable: (error) => error instanceof ChatMovedOn,
  exhausted: () => new BusyError(),
};

/**
 * The activity adjusted to the chat as it is: its pin, and without the last-message fields when
 * a newer message already set them. StaleChat when its model is not the activity's any more.
 */
function adjustedTo(chat: ChatRecord, current: ChatActivity): ChatActivity {
  if (current.modelId !== undefined && chat.model_id !== current.modelId) throw new StaleChat(chat);
  const newer =
    chat.last_message_at !== null &&
    current.lastMessageAt !== undefined &&
    chat.last_message_at > current.lastMessageAt;
  const { streamOpened, streamClosed } = current;
  return newer
    ? {
        now: current.now,
        pinned: chat.pinned,
        countsUnread: current.countsUnread ?? false,
        ...(current.modelId !== undefined ? { modelId: current.modelId } : {}),
        ...(streamOpened !== undefined ? { streamOpened } : {}),
        ...(streamClosed !== undefined ? { streamClosed } : {}),
      }
    : { ...current, pinned: chat.pinned };
}
