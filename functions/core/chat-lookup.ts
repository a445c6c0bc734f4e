/**
 * Finding a chat: its 404, the chat itself, and the per-container cache of the facts a message
 * takes from its chat (model and pinned flag). Below every service that works inside a chat
 * (chats, messages, streaming, requests, media): it imports none of them.
 */
import { NotFoundError } from '../errors.js';
import { isId } from '../platform/ids.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatRecord } from '../store/chats-repo.js';

export const chatNotFound = (chatId: string) => NotFoundError.of('chatId', chatId, 'Chat not found.');

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
