/**
 * The user's own messages on their way: each is a mutation in the query cache (keyed by its chat),
 * shown at once while it is sent, kept with its reason when it failed, until it is retried or
 * discarded. It is sent with an Idempotency-Key that a retry reuses, so it is never stored twice.
 * They outlive the chat's screen: a message still sending when the person opens another chat is
 * there, sent or failed, when they come back.
 */
import { useMutationState } from '@tanstack/react-query';
import type { Mutation } from '@tanstack/react-query';
import { api, newIdempotencyKey } from '../api/client';
import { queryClient } from '../api/query-client';
import type { Message } from '../api/types';
import { putMessage } from './messages';

export interface Outgoing {
  localId: string;
  content: string;
  /** Attached media (uploaded already), sent as `trace.mediaIds`. */
  mediaIds?: string[];
  idempotencyKey: string;
  createdAt: string;
}

export interface OutgoingShown extends Outgoing {
  status: 'sending' | 'failed';
  error?: string;
}

const sendKey = (chatId: string) => ['send', chatId] as const;
const mutations = () => queryClient.getMutationCache();
const ofChat = (chatId: string) =>
  mutations().findAll({ mutationKey: sendKey(chatId), predicate: (m) => m.state.status !== 'success' });

function deliver(chatId: string, outgoing: Outgoing): void {
  const mutation = mutations().build<Message, Error, Outgoing, unknown>(queryClient, {
    mutationKey: sendKey(chatId),
    mutationFn: (o) => api.sendMessage(chatId, o.content, o.idempotencyKey, o.mediaIds),
    // Kept until sent (then removed) or discarded: never collected while the person may retry it.
    gcTime: Infinity,
    onSuccess: (message) => {
      putMessage(chatId, message);
      mutations().remove(mutation);
    },
  });
  void mutation.execute(outgoing).catch(() => undefined);
}

/** Shown at once, then sent. */
export function sendMessage(chatId: string, content: string, mediaIds: string[] = []): void {
  deliver(chatId, {
    localId: newIdempotencyKey(),
    content,
    ...(mediaIds.length ? { mediaIds } : {}),
    idempotencyKey: newIdempotencyKey(),
    createdAt: new Date().toISOString(),
  });
}

const find = (chatId: string, localId: string) =>
  ofChat(chatId).find((m) => (m.state.variables as Outgoing | undefined)?.localId === localId);

/** Sends a failed message again, with its Idempotency-Key. */
export function retryMessage(chatId: string, localId: string): void {
  const failed = find(chatId, localId);
  if (!failed || failed.state.status !== 'error') return;
  mutations().remove(failed);
  deliver(chatId, failed.state.variables as Outgoing);
}

export function discardMessage(chatId: string, localId: string): void {
  const mutation = find(chatId, localId);
  if (mutation) mutations().remove(mutation);
}

/**
 * The service stored one of this page's own messages (its event came before the POST's answer, or
 * the answer was lost): the oldest unsent copy with that text is that message, so it is no longer
 * shown as sending or failed, and no Retry is offered for what is already stored.
 */
export function settleOutgoing(message: Message): void {
  if (message.role !== 'user') return;
  const mine = ofChat(message.chat_id)
    .filter((m) => (m.state.variables as Outgoing | undefined)?.content === message.content_final)
    .sort((a, b) => a.mutationId - b.mutationId)[0];
  if (mine) mutations().remove(mine);
}

const shown = (mutation: Mutation<unknown, Error, unknown>): OutgoingShown => ({
  ...(mutation.state.variables as Outgoing),
  status: mutation.state.status === 'error' ? 'failed' : 'sending',
  ...(mutation.state.error ? { error: mutation.state.error.message } : {}),
});

/** The chat's messages on their way or failed, oldest first. */
export function useOutgoing(chatId: string): OutgoingShown[] {
  return useMutationState({
    filters: { mutationKey: sendKey(chatId), predicate: (m) => m.state.status !== 'success' },
    select: (mutation) => shown(mutation as Mutation<unknown, Error, unknown>),
  });
}
