/** A chat's tags as the page shows them: the latest known list with the edits not yet saved (chat/tag-edits.ts). */
import type { Chat } from '../api/types';
import { useStore } from '../state/store';
import { tagEdits } from './tag-edits';

export function useTags(chat: Chat | undefined): string[] {
  useStore(tagEdits);
  return chat ? tagEdits.shown(chat) : [];
}
