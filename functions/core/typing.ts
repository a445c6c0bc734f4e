/**
 * Typing indicators (§5.3.8, §5.3.9): ephemeral events on an existing chat; nothing stored,
 * except in batched_sequential dispatch the user's typing time (the dispatch typing grace).
 */
import type { Deadline } from '../platform/deadline.js';
import { isId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import type { TransactWrite } from '../store/db.js';
import { recordUserTyping } from '../store/dispatch/state.js';
import { ephemeralEventPut, landEphemeral } from '../store/events-repo.js';
import { USER_SENDER_ID } from '../model.js';
import { EVENTS } from '../model/events.js';
import { chatNotFound } from './chat-lookup.js';
import { defaultDeps } from './deps.js';
import type { Deps } from './deps.js';

/** POST /chats/{chatId}/typing (§5.3.8): an ephemeral `chat.typing`; nothing stored. */
export async function agentTyping(
  chatId: string,
  agentId: string,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const event = ephemeralEventPut(EVENTS.chatTyping.of({ chatId, agentId }), now);
  await transact([guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)), event], deadline);
  await landEphemeral(event);
}

/**
 * POST /chats/{chatId}/user-typing (§5.3.9): an ephemeral `chat.user_typing`; in
 * batched_sequential mode also the time, for the dispatch typing grace (§4.4.3).
 */
export async function userTyping(
  config: InstanceConfig,
  chatId: string,
  deadline: Deadline,
  deps: Deps = defaultDeps,
): Promise<void> {
  if (!isId(chatId)) throw chatNotFound(chatId);
  const now = deps.clock().toISOString();
  const event = ephemeralEventPut(EVENTS.chatUserTyping.of({ chatId, senderId: USER_SENDER_ID }), now);
  const items: TransactWrite[] = [guarded(Chats.chatExists(chatId), () => chatNotFound(chatId)), event];
  if (config.server.dispatch.mode === 'batched_sequential') items.push(recordUserTyping(chatId, now));
  await transact(items, deadline);
  await landEphemeral(event);
}
