/**
 * The tab's event stream applied to the query cache (§6.2): each event updates the queries it
 * concerns in place, or invalidates them so that what is on screen is read again:
 * - anything about a chat re-reads that chat (coalesced), which places it in every cached list;
 * - a message's creation, chunks (at most once per frame) and completion patch the chat's pages;
 *   a completion or a media upload for a message the pages do not hold re-reads them;
 * - a request's events close it in place, or re-read the chat's requests; they update the
 *   approvals (every chat's pending requests) and read the decision log's new entries;
 * - an agent's typing shows in the chat's typing entry until its message or a timeout.
 * When the stream opens again after an interruption, every query is invalidated: the ones on
 * screen are read again at once, the others when next shown.
 */
import type { QueryClient } from '@tanstack/react-query';
import type { EventEnvelope } from './api/types';
import {
  flushChunks,
  knowsMessage,
  messageOfEvent,
  patchMessage,
  putMessage,
  queueChunk,
  rereadMessages,
} from './chat/messages';
import { settleOutgoing } from './chat/outgoing';
import { agentDone, agentTyping } from './chat/typing';
import { refreshChat } from './inbox/chats';
import { applyRequestEvent } from './requests/requests';
import { applyApprovalEvent } from './approvals/approvals';
import { applyDecisionEvent } from './decisions/decisions';
import { live } from './live/events';

function apply(event: EventEnvelope): void {
  const { chatId } = event.payload;
  if (typeof chatId !== 'string') return;
  if (event.type !== 'message.streaming.chunk' && !event.type.endsWith('typing')) refreshChat(chatId);
  switch (event.type) {
    case 'chat.typing':
      agentTyping(chatId, event.payload.agentId);
      break;
    case 'message.created': {
      const message = messageOfEvent(event);
      if (message.role === 'agent') agentDone(chatId, message.sender_id);
      if (!knowsMessage(chatId, message.id)) {
        settleOutgoing(message);
        putMessage(chatId, message);
      }
      break;
    }
    case 'message.streaming.chunk':
      queueChunk(chatId, event.payload.messageId, event.payload.deltaText, event.timestamp);
      break;
    case 'message.streaming.complete': {
      const { messageId, streamState, finalText } = event.payload;
      flushChunks();
      const known = patchMessage(chatId, messageId, (m) => ({
        ...m,
        stream_state: streamState,
        content_final: streamState === 'complete' ? (finalText ?? m.content_partial) : null,
        content_partial: streamState === 'complete' ? null : m.content_partial,
        updated_at: event.timestamp,
      }));
      // A message this page never saw (it began before the page was open): read the pages again.
      if (!known) rereadMessages(chatId);
      break;
    }
    case 'media.attached': {
      // Attachments render from the message's trace; a later upload to a known message re-reads it.
      const { messageId } = event.payload;
      if (messageId !== null && knowsMessage(chatId, messageId)) rereadMessages(chatId);
      break;
    }
    case 'request.created':
    case 'request.resolved':
    case 'request.cancelled':
    case 'request.reminder':
      applyRequestEvent(event);
      applyApprovalEvent(event);
      applyDecisionEvent(event);
      break;
  }
}

/** Starts the stream and keeps the cache current from it; returns the stop. */
export function startLiveCache(client: QueryClient): () => void {
  live.start();
  const unsubscribe = live.subscribe(apply);
  const unreopen = live.onReopen(() => void client.invalidateQueries());
  return () => {
    unsubscribe();
    unreopen();
    live.stop();
  };
}
