/**
 * The app's server state: one TanStack Query cache, keyed by the API path read (the path's
 * template first, then what fills it: `['/api/v1/chats/{chatId}', chatId]`), so what a screen
 * shows is exactly one read of the API, shared by every screen that shows it.
 *
 * Reads never go stale by time: the tab's event stream keeps the cache current (live/cache.ts
 * applies each event to the queries it concerns, or invalidates them), and when the stream opens
 * again after an interruption every query is invalidated, which re-reads the ones on screen. A
 * read waits for the stream's first opening (live.ready()), so that it misses no event: a stream
 * without a cursor replays nothing, and the service fixes the stream's start before it answers.
 */
import { QueryClient } from '@tanstack/react-query';
import type { QueryKey } from '@tanstack/react-query';
import { ApiError } from './client';

/** A failed read is retried once when it may pass as is (busy, unreachable); never a 4xx. */
const retry = (failures: number, error: unknown) => failures < 1 && error instanceof ApiError && error.transient;

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: Infinity,
      gcTime: 5 * 60_000,
      retry,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
    },
    mutations: { retry: false },
  },
});

/**
 * Reads the queries under `queryKey` again because a live event changed what they hold. An
 * invalidation alone is folded into a first read still on its way (TanStack Query starts a new
 * fetch over a running one only when the query already has data), and that read may have been
 * answered before the event's write: the page would miss the change until its next read (seen: a
 * request the agent asked as the chat opened never showed). So a first read in flight is
 * cancelled (the query goes back to having no data) and made again.
 */
export async function reread(queryKey: QueryKey): Promise<void> {
  await cancelFirstReads(queryKey);
  await queryClient.invalidateQueries({ queryKey });
}

/**
 * The first reads under `queryKey` still on their way made again (reread's rule), and only those:
 * for a change written into the queries that hold data already (the chat's re-read puts the chat
 * into every list it has), while a list still on its first read would land without it.
 */
export async function rereadFirstReads(queryKey: QueryKey): Promise<void> {
  if (await cancelFirstReads(queryKey)) await queryClient.refetchQueries(firstReads(queryKey));
}

const firstReads = (queryKey: QueryKey) => ({
  queryKey,
  predicate: (query: { state: { data: unknown } }) => query.state.data === undefined,
});

/** Cancels the first reads in flight under `queryKey` (their queries go back to no data); whether there were any. */
async function cancelFirstReads(queryKey: QueryKey): Promise<boolean> {
  if (queryClient.isFetching(firstReads(queryKey)) === 0) return false;
  await queryClient.cancelQueries(firstReads(queryKey));
  return true;
}

/** The query keys, by API path: a key's first element is the path template it reads. */
export const keys = {
  config: () => ['/api/v1/config'] as const,
  chatLists: () => ['/api/v1/chats'] as const,
  chatList: (params: { archived: boolean; tag?: string; agentId?: string }) => ['/api/v1/chats', params] as const,
  chat: (chatId: string) => ['/api/v1/chats/{chatId}', chatId] as const,
  messages: (chatId: string) => ['/api/v1/chats/{chatId}/messages', chatId] as const,
  requests: (chatId: string) => ['/api/v1/chats/{chatId}/requests', chatId, { status: 'all' }] as const,
  /** Every chat's pending requests (GET /requests?status=pending, every page): the approvals. */
  approvals: () => ['/api/v1/requests', { status: 'pending' }] as const,
  /** The decision log, every entry read so far (GET /decisions, ascending). */
  decisions: () => ['/api/v1/decisions'] as const,
  media: (mediaId: string) => ['/api/v1/media/{mediaId}', mediaId] as const,
  search: (params: { q: string; scope: string }) => ['/api/v1/search', params] as const,
  tagSuggestions: (q: string) => ['/api/v1/tags/suggestions', q] as const,
};

/**
 * Runs a mutation through the cache's MutationCache (so it is visible to useMutationState and
 * outlives the screen that started it): `optimistic` changes the cache at once, the answer
 * settles it, and a failure re-reads what the optimistic change touched (`reread`) instead of
 * putting a snapshot back, so a concurrent change that arrived meanwhile is never undone.
 */
export function runMutation<TData, TVariables>(options: {
  mutationKey: readonly unknown[];
  /** Mutations of one scope run one at a time, in the order they were asked for. */
  scope?: string;
  mutationFn: (variables: TVariables) => Promise<TData>;
  variables: TVariables;
  optimistic?: (variables: TVariables) => void;
  settle?: (data: TData, variables: TVariables) => void;
  reread?: (variables: TVariables) => void;
}): Promise<TData> {
  const mutation = queryClient.getMutationCache().build<TData, Error, TVariables, unknown>(queryClient, {
    mutationKey: options.mutationKey,
    ...(options.scope ? { scope: { id: options.scope } } : {}),
    mutationFn: options.mutationFn,
    onMutate: (variables) => options.optimistic?.(variables),
    onSuccess: (data, variables) => options.settle?.(data, variables),
    onError: (_error, variables) => options.reread?.(variables),
  });
  return mutation.execute(options.variables);
}
