/**
 * Reading chats (§3.5, §5.3.2, §5.3.3): one chat, the list in §1.9 order with keyset cursors,
 * and the unread and pending summaries. Each shows a chat's updated_at as its chunks moved it
 * (withStreamActivity).
 */
import { FieldRuleError } from '../errors.js';
import { queryChats, chatsNeedingAttention } from '../store/chat-lists-repo.js';
import * as Chats from '../store/chats-repo.js';
import type { ChatRecord } from '../store/chats-repo.js';
import { decodeCursor, encodeCursor } from '../store/cursor.js';
import { streamActivity } from '../store/message-queries-repo.js';
import type { Chat } from '../model.js';
import { existingChat } from './chat-lookup.js';

/** One page of a list endpoint (chats, messages, media) with its keyset cursor. */
export interface Page<T> {
  data: T[];
  cursor: { next: string | null; hasMore: boolean };
}

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
  const page = await queryChats({
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

export interface UnreadSummary {
  total_unread: number;
  unread_by_agent: Record<string, number>;
}

/** §3.5 over the chats that may need attention (the others contribute zero). */
export async function unreadSummary(archived: boolean | undefined): Promise<UnreadSummary> {
  const entries = (await chatsNeedingAttention()).filter((e) => archived === undefined || e.is_archived === archived);
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
  const entries = (await chatsNeedingAttention()).filter((e) => archived === undefined || e.is_archived === archived);
  const total = entries.reduce((sum, e) => sum + Math.max(0, e.pending_requests_count), 0);
  return { pending_requests_total: Math.max(0, total) };
}
