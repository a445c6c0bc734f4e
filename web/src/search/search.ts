/**
 * The search box's state and its hits (GET /search, §5.7 and §9) in the query cache, keyed by the
 * query and scope, pages appended by cursor. Typing runs the query after a pause; Enter or a scope
 * change runs it at once; while a new query is on its way, the hits of the last one stay shown
 * (an answer to a query no longer current never shows: each key has its own answer).
 */
import { useEffect, useRef, useState } from 'react';
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { api } from '../api/client';
import { keys } from '../api/query-client';
import type { ChatHit, MessageHit, SearchScope } from '../api/types';

export const SEARCH_PAGE = 20;
const DEBOUNCE_MS = 250;

export interface SearchState {
  /** The box's text; the results view shows while it is not blank. */
  text: string;
  scope: SearchScope;
  /** The query the hits shown answer (trimmed), or '' before the first answer. */
  query: string;
  chats: ChatHit[];
  messages: MessageHit[];
  hasMore: boolean;
  loading: boolean;
  loadingMore: boolean;
  error: string | undefined;
  setText(text: string): void;
  setScope(scope: SearchScope): void;
  /** The first page of the box's text, now (Enter, Retry). */
  run(): void;
  more(): void;
  clear(): void;
}

export function useSearch(): SearchState {
  const [text, setTextNow] = useState('');
  const [scope, setScope] = useState<SearchScope>('all');
  /** The query asked of the service: the box's text after a pause, or at once on Enter. */
  const [asked, setAsked] = useState('');
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);

  const results = useInfiniteQuery({
    queryKey: keys.search({ q: asked, scope }),
    queryFn: async ({ pageParam, signal }) => ({
      q: asked,
      ...(await api.search({ q: asked, scope, cursor: pageParam, limit: SEARCH_PAGE }, signal)),
    }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => (last.cursor.hasMore ? last.cursor.next : undefined),
    enabled: asked !== '',
    // Hits are not kept live: a query asked again is answered again.
    staleTime: 0,
    gcTime: 60_000,
    placeholderData: keepPreviousData,
  });
  const pages = asked ? (results.data?.pages ?? []) : [];

  return {
    text,
    scope,
    query: pages[0]?.q ?? '',
    chats: pages.flatMap((page) => page.chats),
    messages: pages.flatMap((page) => page.messages),
    hasMore: Boolean(asked && results.hasNextPage),
    loading: Boolean(asked) && results.isFetching && !results.isFetchingNextPage,
    loadingMore: results.isFetchingNextPage,
    error: asked && results.error ? results.error.message : undefined,
    setText(next) {
      setTextNow(next);
      clearTimeout(timer.current);
      if (!next.trim()) {
        setAsked('');
        return;
      }
      timer.current = setTimeout(() => setAsked(next.trim()), DEBOUNCE_MS);
    },
    setScope,
    run() {
      clearTimeout(timer.current);
      const q = text.trim();
      if (!q) return;
      if (q === asked) void results.refetch();
      else setAsked(q);
    },
    more() {
      if (results.hasNextPage && !results.isFetching) void results.fetchNextPage();
    },
    clear() {
      clearTimeout(timer.current);
      setTextNow('');
      setAsked('');
    },
  };
}
