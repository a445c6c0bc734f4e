/**
 * One open chat as its screen reads it: its messages (oldest first), the user's own messages on
 * their way, its pending requests and the closed ones (shown in the history where they were
 * asked), each from the query cache, with what the screen can do with them.
 */
import { useCallback, useMemo } from 'react';
import type { ChatRequest, Message } from '../api/types';
import { useRequests } from '../requests/requests';
import { useMessages } from './messages';
import { discardMessage, retryMessage, sendMessage, useOutgoing } from './outgoing';
import type { OutgoingShown } from './outgoing';

export interface ChatScreen {
  chatId: string;
  messages: Message[];
  outgoing: OutgoingShown[];
  requests: ChatRequest[];
  /** Requests answered or cancelled, oldest first. */
  closed: ChatRequest[];
  hasOlder: boolean;
  loading: boolean;
  loadingOlder: boolean;
  error: string | undefined;
  loadOlder(): void;
  reload(): void;
  send(content: string, mediaIds: string[]): void;
  retry(localId: string): void;
  discard(localId: string): void;
}

export function useChatScreen(chatId: string): ChatScreen {
  const messages = useMessages(chatId);
  const { pending, closed } = useRequests(chatId);
  const outgoing = useOutgoing(chatId);
  const send = useCallback((content: string, mediaIds: string[]) => sendMessage(chatId, content, mediaIds), [chatId]);
  const retry = useCallback((localId: string) => retryMessage(chatId, localId), [chatId]);
  const discard = useCallback((localId: string) => discardMessage(chatId, localId), [chatId]);
  return useMemo(
    () => ({ chatId, ...messages, outgoing, requests: pending, closed, send, retry, discard }),
    [chatId, messages, outgoing, pending, closed, send, retry, discard],
  );
}
