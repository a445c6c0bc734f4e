/**
 * Marks the open chat read when the person has seen what is unread (issue 33 item 10): the tab is
 * visible and the history is scrolled to (near) its newest message. Checked whenever the chat is
 * read again (every event about it re-reads it: a message, a streamed reply's creation and its
 * completion, a mark-read), when the tab is shown, and when the reader scrolls back down.
 *
 * The check looks at each fresh read of the chat, not at a change of its unread count: an agent
 * that starts a streamed reply just after this tab's mark-read was written keeps the count at 1
 * across both reads, and a check on changes only would leave that reply unread while it is watched.
 * One mark-read is on its way at a time; a read made before it was written may cause one more.
 */
import { useEffect, useRef } from 'react';
import { api } from '../api/client';
import type { Chat } from '../api/types';

/** As MessageList's "following the newest" distance. */
const NEAR_BOTTOM_PX = 80;

/** The open chat's scrolling history (MessageList's `.messages`). */
const historyOf = (): HTMLElement | null => document.querySelector('.chat-view .messages');

function watching(): boolean {
  if (document.visibilityState !== 'visible') return false;
  const history = historyOf();
  if (!history) return true;
  return history.scrollHeight - history.scrollTop - history.clientHeight < NEAR_BOTTOM_PX;
}

export function useMarkReadWhenSeen(chat: Chat | undefined): void {
  const latest = useRef(chat);
  latest.current = chat;
  const check = useRef<() => void>(() => {});
  const chatId = chat?.id;

  useEffect(() => {
    if (!chatId) return;
    let inFlight = false;
    /** The read of the chat the last mark-read answered: not marked again for the same read. */
    let markedFor: Chat | undefined;
    let active = true;
    const run = () => {
      const current = latest.current;
      if (!active || !current || current.id !== chatId || current.unread_count === 0) return;
      if (inFlight || current === markedFor || !watching()) return;
      inFlight = true;
      markedFor = current;
      void api
        .markRead(chatId)
        .catch(() => {})
        .finally(() => {
          inFlight = false;
          // A newer read that came while this one was on its way.
          if (latest.current !== markedFor) run();
        });
    };
    check.current = run;
    const onScroll = (event: Event) => {
      if (event.target === historyOf()) run();
    };
    document.addEventListener('visibilitychange', run);
    document.addEventListener('scroll', onScroll, { capture: true, passive: true });
    return () => {
      active = false;
      check.current = () => {};
      document.removeEventListener('visibilitychange', run);
      document.removeEventListener('scroll', onScroll, { capture: true });
    };
  }, [chatId]);

  // Every fresh read of the chat (a new object from the chats store).
  useEffect(() => {
    check.current();
  }, [chat]);
}
