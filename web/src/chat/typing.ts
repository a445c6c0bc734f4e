/**
 * Who is typing in a chat: `chat.typing` events (ephemeral, §6.1) show an agent for TYPING_MS
 * after its last one; its message's arrival ends it sooner. Kept in the query cache under a key of
 * the page's own (`['typing', chatId]`, nothing the API serves), written by the live layer
 * (live-cache.ts) whether or not the chat is on screen: a chat opened, or its chunk loaded, just
 * after the event still shows it.
 */
import { useEffect, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { queryClient } from '../api/query-client';

const TYPING_MS = 6000;

/** agent id → when its indicator ends (ms since epoch). */
type Typing = Readonly<Record<string, number>>;

const typingKey = (chatId: string) => ['typing', chatId] as const;

export function agentTyping(chatId: string, agentId: string): void {
  queryClient.setQueryData<Typing>(typingKey(chatId), (t) => ({ ...t, [agentId]: Date.now() + TYPING_MS }));
}

/** The agent's message arrived: its indicator ends. */
export function agentDone(chatId: string, agentId: string): void {
  const held = queryClient.getQueryData<Typing>(typingKey(chatId));
  if (!held || !(agentId in held)) return;
  const { [agentId]: _ended, ...rest } = held;
  queryClient.setQueryData<Typing>(typingKey(chatId), rest);
}

export function useTyping(chatId: string): string[] {
  const { data } = useQuery<Typing>({
    queryKey: typingKey(chatId),
    // Nothing to read: a reopened stream (which invalidates the cache) starts with nobody typing.
    queryFn: () => ({}),
    initialData: {},
    staleTime: Infinity,
  });
  // Re-rendered by one timer, at the soonest end still ahead.
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const ahead = Object.values(data).filter((end) => end > Date.now());
    if (!ahead.length) return;
    const timer = setTimeout(() => setNow(Date.now()), Math.min(...ahead) - Date.now() + 10);
    return () => clearTimeout(timer);
  }, [data, now]);
  return Object.entries(data)
    .filter(([, end]) => end > Date.now())
    .map(([id]) => id);
}
