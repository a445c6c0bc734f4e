/**
 * A chat's tag edits, as mutations queued per chat so that quick edits are not lost (issue 33 item 9).
 *
 * PATCH /chats/{id} only replaces the whole list (§5.3.4: no add/remove, no version check), so an
 * edit is kept as what the person asked for (add this tag, remove that one), never as a list made
 * from an older answer. The page shows the latest known list with the edits not yet saved applied
 * (useTags). The edits of one chat share a mutation scope, so TanStack Query runs them one at a
 * time, in order; each reads the chat afresh (GET, which also brings in another tab's change that
 * this tab's live stream has not delivered yet), applies its edit, and sends the result.
 *
 * What remains: another writer's PATCH landing between an edit's read and its write (one round
 * trip, a few milliseconds on a good connection) is overwritten by it.
 */
import { useMutationState } from '@tanstack/react-query';
import { api } from '../api/client';
import { queryClient } from '../api/query-client';
import type { Chat } from '../api/types';
import { upsertChat } from '../inbox/chats';

export interface TagEdit {
  op: 'add' | 'remove';
  tag: string;
}

/** The list after the edits, in order (an added tag goes last, as the service keeps the first occurrence). */
export function applyTagEdits(tags: readonly string[], edits: readonly TagEdit[]): string[] {
  let next = [...tags];
  for (const { op, tag } of edits) {
    if (op === 'add' && !next.includes(tag)) next.push(tag);
    if (op === 'remove') next = next.filter((t) => t !== tag);
  }
  return next;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t, i) => t === b[i]);
const editKey = (chatId: string) => ['PATCH /api/v1/chats/{chatId} tags', chatId] as const;

function queue(chatId: string, edit: TagEdit): void {
  // A new edit clears the last failure's message (its edit was dropped: the list shown is the service's).
  const cache = queryClient.getMutationCache();
  for (const failed of cache.findAll({ mutationKey: editKey(chatId), status: 'error' })) cache.remove(failed);
  const mutation = cache.build<Chat, Error, TagEdit, unknown>(queryClient, {
    mutationKey: editKey(chatId),
    scope: { id: `tags:${chatId}` },
    mutationFn: async (change) => {
      const fresh = await api.getChat(chatId);
      upsertChat(fresh);
      const tags = applyTagEdits(fresh.tags, [change]);
      return sameList(tags, fresh.tags) ? fresh : api.updateChat(chatId, { tags });
    },
    onSuccess: (chat) => {
      upsertChat(chat);
      cache.remove(mutation);
    },
  });
  void mutation.execute(edit).catch(() => undefined);
}

export const addTag = (chatId: string, tag: string): void => {
  const name = tag.trim();
  if (name) queue(chatId, { op: 'add', tag: name });
};
export const removeTag = (chatId: string, tag: string): void => queue(chatId, { op: 'remove', tag });

/** The chat's edits not yet saved (in order), and the last failed one's message. */
export function useTagEdits(chatId: string | undefined): { pending: TagEdit[]; error: string | undefined } {
  const states = useMutationState({
    filters: { mutationKey: editKey(chatId ?? '') },
    select: (m) => ({ edit: m.state.variables as TagEdit, status: m.state.status, error: m.state.error?.message }),
  });
  return {
    pending: states.filter((s) => s.status === 'pending' && s.edit).map((s) => s.edit),
    error: states.findLast((s) => s.status === 'error')?.error,
  };
}
