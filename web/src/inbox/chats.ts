/**
 * The chats in the query cache: the list of a view (inbox or archived, filtered by tag and agent,
 * §5.3.2) read page by page up to MAX_LISTED, and each chat read on its own. Any event about a
 * chat re-reads that chat once (coalesced), and the answer goes into its own query and into every
 * cached list at the place the service's order gives it (or out of a list whose view or filter it
 * no longer matches), so previews, badges and order follow the service's derived fields instead
 * of being guessed here.
 */
import { useEffect } from 'react';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { InfiniteData } from '@tanstack/react-query';
import { api, ApiError } from '../api/client';
import { keys, queryClient, rereadFirstReads, runMutation } from '../api/query-client';
import type { Chat, Page } from '../api/types';
import { live } from '../live/events';
import type { InboxFilter } from '../router';

export type ChatsView = 'inbox' | 'archived';

const PAGE = 100;
/** The inbox reads this many chats at most (pages of 100 after the first). */
const MAX_LISTED = 1000;
const COALESCE_MS = 60;

type ListParams = ReturnType<typeof listParams>;
type ListData = InfiniteData<Page<Chat>, string | null>;

const listParams = (view: ChatsView, filter: InboxFilter) => ({
  archived: view === 'archived',
  ...(filter.tag ? { tag: filter.tag } : {}),
  ...(filter.agentId ? { agentId: filter.agentId } : {}),
});

export function compareChats(a: Chat, b: Chat): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  const at = a.last_message_at ? Date.parse(a.last_message_at) : 0;
  const bt = b.last_message_at ? Date.parse(b.last_message_at) : 0;
  if (at !== bt) return bt - at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The service's filter test (§5.3.2: exact tag, agent among the chat's agents). */
export const matchesFilter = (chat: Chat, filter: { tag?: string; agentId?: string }): boolean =>
  (!filter.tag || chat.tags.includes(filter.tag)) && (!filter.agentId || chat.agent_ids.includes(filter.agentId));

/** A view's chats in the service's order (§1.9: pinned first, then newest activity, then id). */
export function useChatList(view: ChatsView, filter: InboxFilter) {
  const params = listParams(view, filter);
  const query = useInfiniteQuery({
    queryKey: keys.chatList(params),
    queryFn: async ({ pageParam, signal }) => {
      await live.ready();
      return api.listChats({ ...params, cursor: pageParam, limit: PAGE }, signal);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last, pages) =>
      last.cursor.hasMore && pages.length * PAGE < MAX_LISTED ? last.cursor.next : undefined,
  });
  const { hasNextPage, isFetchingNextPage, fetchNextPage, isError } = query;
  // The list shows each page as it comes, and reads the next at once.
  useEffect(() => {
    if (hasNextPage && !isFetchingNextPage && !isError) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, isError, fetchNextPage]);
  return {
    list: query.data?.pages.flatMap((page) => page.data) ?? [],
    loading: query.isPending,
    error: query.error ? query.error.message : undefined,
    retry: () => void query.refetch(),
  };
}

/** The chats of every cached list, by id (the inbox filters offer their tags). */
export function listedChats(): Chat[] {
  return queryClient
    .getQueriesData<ListData>({ queryKey: keys.chatLists() })
    .flatMap(([, data]) => data?.pages.flatMap((page) => page.data) ?? []);
}

/**
 * One chat, read when it opens (and again with every event about it). Each read is a new object
 * (no structural sharing): the read marker (chat/read-marker.ts) checks every fresh read.
 */
export function useChat(chatId: string) {
  return useQuery<Chat>({
    queryKey: keys.chat(chatId),
    queryFn: async ({ signal }) => {
      await live.ready();
      const chat = withPendingChanges(await api.getChat(chatId, signal));
      // A read cancelled on its way (refreshChatNow's newer one won) changes nothing.
      signal.throwIfAborted();
      putInLists(chat);
      return chat;
    },
    structuralSharing: false,
    // While the first read is on its way, the list's copy (if any) shows.
    placeholderData: () => listedChats().find((c) => c.id === chatId),
  });
}

/**
 * A chat read or written (a read, a create, a PATCH answer): its query, and every list at its
 * place. Changes of this page still on their way stay shown on top of it: a read served before
 * they landed must not flip a toggle back until their answer comes.
 */
export function upsertChat(read: Chat): void {
  const chat = withPendingChanges(read);
  queryClient.setQueryData(keys.chat(chat.id), chat);
  putInLists(chat);
}

/** Each cached list (of whatever view and filter) made anew by `change`. */
function eachList(change: (data: ListData, params: ListParams) => ListData): void {
  for (const [key, data] of queryClient.getQueriesData<ListData>({ queryKey: keys.chatLists() })) {
    const params = key[1] as ListParams | undefined;
    if (data && params) queryClient.setQueryData<ListData>(key, change(data, params));
  }
}

const without = (data: ListData, chatId: string) =>
  data.pages.map((page) => ({ ...page, data: page.data.filter((c) => c.id !== chatId) }));

const putInLists = (chat: Chat) => eachList((data, params) => placed(data, chat, params));
const removeChat = (chatId: string) => eachList((data) => ({ ...data, pages: without(data, chatId) }));

/** The list without the chat, and with it at its place when it belongs there. */
function placed(data: ListData, chat: Chat, params: ListParams): ListData {
  const pages = without(data, chat.id);
  const belongs = chat.is_archived === params.archived && matchesFilter(chat, params);
  if (belongs) {
    const last = pages.length - 1;
    // The first page that holds a chat ordered after it; past the last one read, only if no page follows.
    let at = pages.findIndex((page) => page.data.some((c) => compareChats(chat, c) < 0));
    if (at === -1 && !pages[last]?.cursor.hasMore) at = last;
    const page = pages[at];
    if (page) {
      const index = page.data.findIndex((c) => compareChats(chat, c) < 0);
      page.data.splice(index === -1 ? page.data.length : index, 0, chat);
    }
  }
  return { ...data, pages };
}

const stale = new Set<string>();
let timer: ReturnType<typeof setTimeout> | undefined;

/** Re-read a chat soon (coalescing bursts of events about it). */
export function refreshChat(chatId: string): void {
  stale.add(chatId);
  if (timer) return;
  timer = setTimeout(() => {
    timer = undefined;
    const ids = [...stale];
    stale.clear();
    for (const id of ids) void refreshChatNow(id);
  }, COALESCE_MS);
}

/**
 * Re-reads a chat now: its query (shown or not) and the lists; a chat gone (404) leaves them.
 * Reads of the chat still on their way may have been answered before the change that brought
 * this re-read, so they are cancelled rather than left to land after it with an older chat; a
 * list still on its first read is read again (one that holds data gets the chat put in).
 */
export async function refreshChatNow(chatId: string): Promise<Chat | undefined> {
  try {
    const chat = await api.getChat(chatId);
    await queryClient.cancelQueries({ queryKey: keys.chat(chatId) });
    upsertChat(chat);
    void rereadFirstReads(keys.chatLists());
    return chat;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) {
      removeChat(chatId);
      await queryClient.invalidateQueries({ queryKey: keys.chat(chatId) });
    }
    return undefined;
  }
}

type ChatChange = Parameters<typeof api.updateChat>[1];

const patchKey = (chatId: string) => ['PATCH /api/v1/chats/{chatId}', chatId];
const pendingPatches = (chatId: string) =>
  queryClient.getMutationCache().findAll({ mutationKey: patchKey(chatId), status: 'pending' });

/** The chat with this page's PATCHes still on their way applied, in the order they were asked for. */
function withPendingChanges(chat: Chat): Chat {
  return pendingPatches(chat.id)
    .sort((a, b) => a.mutationId - b.mutationId)
    .reduce((shown, mutation) => changed(shown, mutation.state.variables as ChatChange), chat);
}

/** What a PATCH changes of the chat as served (its body's names are camel case, §5.3.4). */
const changed = (chat: Chat, body: ChatChange): Chat => ({
  ...chat,
  ...(body.title !== undefined ? { title: body.title, title_source: 'manual' as const } : {}),
  ...(body.tags !== undefined ? { tags: body.tags } : {}),
  ...(body.pinned !== undefined ? { pinned: body.pinned } : {}),
  ...(body.modelId !== undefined ? { model_id: body.modelId } : {}),
  ...(body.notificationsMuted !== undefined ? { notifications_muted: body.notificationsMuted } : {}),
});

/**
 * PATCH /chats/{id}, shown at once (pin, mute, rename, model): the chat's query and the lists
 * change before the answer, which then settles them; a failure re-reads the chat. A chat's
 * changes go one at a time, in order (a quick Mute then Unmute must not land the other way
 * round); until the last one's answer, every read or answer shows with the later changes on top.
 */
export function updateChat(chatId: string, body: ChatChange): Promise<Chat> {
  return runMutation({
    mutationKey: patchKey(chatId),
    scope: `PATCH chat ${chatId}`,
    mutationFn: () => api.updateChat(chatId, body),
    variables: body,
    optimistic: () => {
      const held = queryClient.getQueryData<Chat>(keys.chat(chatId));
      if (held) upsertChat(changed(held, body));
    },
    // Later changes still on their way stay on top of this answer (upsertChat).
    settle: upsertChat,
    reread: () => void refreshChatNow(chatId),
  });
}

/** Archive or unarchive, then the chat read again (its event would too; this is sooner). */
export async function archiveChat(chatId: string, archived: boolean): Promise<void> {
  await api.archive(chatId, archived);
  await refreshChatNow(chatId);
}

export async function markUnread(chatId: string): Promise<void> {
  await api.markUnread(chatId);
  await refreshChatNow(chatId);
}
