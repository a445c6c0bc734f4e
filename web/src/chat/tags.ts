/** A chat's tags as the page shows them: the latest known list with the edits not yet saved (chat/tag-edits.ts). */
import type { Chat } from '../api/types';
import { applyTagEdits, useTagEdits } from './tag-edits';

export function useTags(chat: Chat | undefined): string[] {
  const { pending } = useTagEdits(chat?.id);
  return chat ? applyTagEdits(chat.tags, pending) : [];
}
