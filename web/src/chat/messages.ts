/**
 * A chat's messages in the query cache: the service's newest-first pages (§5.4.2), the newest
 * first and older ones read as the person scrolls up (or, larger, to reach a search hit deep in
 * history). Live events patch the cached pages in place (live/cache.ts); streamed chunks are
 * applied at most once per frame. A read answered before some live events arrived does not undo
 * them (`keepLive`, message-order.ts).
 */
import { useMemo } from 'react';
import { useInfiniteQuery } from '@tanstack/react-query';
import type { InfiniteData } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys, queryClient, reread } from '../api/query-client';
import type { EventEnvelope, Message, Page } from '../api/types';
import { live } from '../live/events';
import { compareMessages, keepLive } from './message-order';

const PAGE = 50;
/** Pages read to reach a message deep in history (the listing's maximum, §5.4.2). */
const REVEAL_PAGE = 200;

export type MessagePages = InfiniteData<Page<Message>, string | null>;

/** Chats reading older pages at the larger size, to reach a message (ChatView's reveal). */
const revealing = new Set<string>();
export const setRevealing = (chatId: string, on: boolean) =>
  void (on ? revealing.add(chatId) : revealing.delete(chatId));

export function useMessages(chatId: string) {
  const query = useInfiniteQuery({
    queryKey: keys.messages(chatId),
    queryFn: async ({ pageParam }) => {
      await live.ready();
      const limit = pageParam && revealing.has(chatId) ? REVEAL_PAGE : PAGE;
      const page = await api.listMessages(chatId, { cursor: pageParam, limit });
      return pageParam ? page : withEarly(chatId, page);
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last) => (last.cursor.hasMore ? last.cursor.next : undefined),
    structuralSharing: (held: unknown, next: unknown) => keepLive(held, next as MessagePages),
  });
  const { data, isPending, isFetchingNextPage, hasNextPage, error, refetch, fetchNextPage } = query;
  const messages = useMemo(() => (data ? oldestFirst(data) : []), [data]);
  return useMemo(
    () => ({
      /** Oldest first. */
      messages,
      loading: isPending,
      loadingOlder: isFetchingNextPage,
      hasOlder: hasNextPage,
      error: error ? error.message : undefined,
      reload: () => void refetch(),
      loadOlder: () => {
        if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
      },
    }),
    [messages, isPending, isFetchingNextPage, hasNextPage, error, refetch, fetchNextPage],
  );
}

function oldestFirst(data: { pages: Page<Message>[] }): Message[] {
  const out: Message[] = [];
  for (let p = data.pages.length - 1; p >= 0; p--) {
    const page = data.pages[p]!.data;
    for (let i = page.length - 1; i >= 0; i--) out.push(page[i]!);
  }
  return out;
}

const pagesOf = (chatId: string) => queryClient.getQueryData<MessagePages>(keys.messages(chatId));

/**
 * Messages whose events came while the chat's first read was on its way (nothing cached yet to
 * put them in): the read's answer, served before them, gets them when it returns.
 */
const early = new Map<string, Message[]>();

function withEarly(chatId: string, page: Page<Message>): Page<Message> {
  const extra = early.get(chatId);
  early.delete(chatId);
  if (!extra) return page;
  return keepLive({ pages: [{ data: extra.sort((a, b) => compareMessages(b, a)) }] }, { pages: [page] }).pages[0]!;
}

export const knowsMessage = (chatId: string, messageId: string): boolean =>
  pagesOf(chatId)?.pages.some((page) => page.data.some((m) => m.id === messageId)) ?? false;

/** Re-reads the chat's pages (a message this page never saw changed; media came to a known one). */
export const rereadMessages = (chatId: string) => void reread(keys.messages(chatId));

/** A message stored (its event, or the POST's answer): into the newest page, in the service's order. */
export function putMessage(chatId: string, message: Message): void {
  const data = pagesOf(chatId);
  const state = queryClient.getQueryState(keys.messages(chatId));
  if (!data && state?.fetchStatus === 'fetching') {
    early.set(chatId, [...(early.get(chatId) ?? []).filter((m) => m.id !== message.id), message]);
    return;
  }
  if (!data?.pages.length || knowsMessage(chatId, message.id)) return;
  const [newest, ...older] = data.pages;
  const list = newest!.data.slice();
  let index = 0;
  while (index < list.length && compareMessages(list[index]!, message) > 0) index++;
  list.splice(index, 0, message);
  queryClient.setQueryData<MessagePages>(keys.messages(chatId), {
    ...data,
    pages: [{ ...newest!, data: list }, ...older],
  });
}

/** Applies `patch` to a cached message; false when the chat's pages do not hold it. */
export function patchMessage(chatId: string, id: string, patch: (m: Message) => Message): boolean {
  const data = pagesOf(chatId);
  if (!data) return false;
  let found = false;
  const pages = data.pages.map((page) => {
    const index = page.data.findIndex((m) => m.id === id);
    if (index === -1) return page;
    found = true;
    const list = page.data.slice();
    list[index] = patch(list[index]!);
    return { ...page, data: list };
  });
  if (found) queryClient.setQueryData<MessagePages>(keys.messages(chatId), { ...data, pages });
  return found;
}

/** The message a `message.created` event describes (§6.2). */
export function messageOfEvent(event: Extract<EventEnvelope, { type: 'message.created' }>): Message {
  const p = event.payload;
  return {
    id: p.messageId,
    chat_id: p.chatId,
    role: p.role,
    sender_id: p.senderId,
    created_at: p.createdAt,
    updated_at: p.createdAt,
    content_final: p.contentFinal,
    content_partial: null,
    stream_state: p.streamState,
    model_id: null,
    // Absent for a chat's first message.
    trace: p.trace ?? null,
  };
}

/**
 * Streamed chunks, gathered and applied at most once per animation frame however many arrive (a
 * hidden tab gets no frames: a timer still lets its cache settle).
 */
const chunks = new Map<string, { chatId: string; text: string; at: string }>();
let flushScheduled = false;

export function queueChunk(chatId: string, messageId: string, delta: string, at: string): void {
  const waiting = chunks.get(messageId);
  chunks.set(messageId, { chatId, text: (waiting?.text ?? '') + delta, at });
  if (flushScheduled) return;
  flushScheduled = true;
  if (document.visibilityState === 'visible') requestAnimationFrame(flushChunks);
  else setTimeout(flushChunks, 100);
}

/** Applies the chunks gathered so far (also before a completion, which must come after them). */
export function flushChunks(): void {
  flushScheduled = false;
  const gathered = [...chunks];
  chunks.clear();
  for (const [id, { chatId, text, at }] of gathered) {
    patchMessage(chatId, id, (m) =>
      m.stream_state === 'streaming' ? { ...m, content_partial: (m.content_partial ?? '') + text, updated_at: at } : m,
    );
  }
}
