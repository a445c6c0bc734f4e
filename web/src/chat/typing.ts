/**
 * Who is typing in the open chat: `chat.typing` events (ephemeral, §6.1) show an agent for
 * TYPING_MS after its last one; its message's arrival ends it sooner. Not server state: nothing
 * to read back, so it lives in the chat's screen, not in the query cache.
 */
import { useEffect, useState } from 'react';
import { live } from '../live/events';

const TYPING_MS = 6000;

export function useTyping(chatId: string): string[] {
  /** agent id → when its indicator ends (ms since epoch). */
  const [typing, setTyping] = useState<Record<string, number>>({});

  useEffect(() => {
    setTyping({});
    return live.subscribe((event) => {
      if (event.payload.chatId !== chatId) return;
      if (event.type === 'chat.typing') {
        const { agentId } = event.payload;
        setTyping((t) => ({ ...t, [agentId]: Date.now() + TYPING_MS }));
      } else if (event.type === 'message.created' && event.payload.role === 'agent') {
        const { senderId } = event.payload;
        setTyping((t) => {
          if (!(senderId in t)) return t;
          const { [senderId]: _ended, ...rest } = t;
          return rest;
        });
      }
    });
  }, [chatId]);

  // One timer, for the soonest end.
  useEffect(() => {
    const ends = Object.values(typing);
    if (!ends.length) return;
    const timer = setTimeout(
      () => {
        const now = Date.now();
        setTyping((t) => Object.fromEntries(Object.entries(t).filter(([, end]) => end > now)));
      },
      Math.max(0, Math.min(...ends) - Date.now()) + 10,
    );
    return () => clearTimeout(timer);
  }, [typing]);

  return Object.keys(typing);
}
