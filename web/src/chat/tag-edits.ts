/**
 * A chat's tag edits, queued per chat so that quick edits are not lost (issue 33 item 9).
 *
 * PATCH /chats/{id} only replaces the whole list (§5.3.4: no add/remove, no version check), so an
 * edit is kept as what the person asked for (add this tag, remove that one), never as a list made
 * from an older answer. The page shows the latest known list with the edits not yet saved applied.
 * One save per chat is on its way at a time; each save reads the chat afresh (GET, which also
 * brings in another tab's change that this tab's live stream has not delivered yet), applies every
 * edit still waiting, and sends the result. Edits made while a save is on its way wait for the next.
 *
 * What remains: another writer's PATCH landing between this save's read and its write (one round
 * trip, a few milliseconds on a good connection) is overwritten by it.
 */
import { api } from '../api/client';
import type { Chat } from '../api/types';
import { chats } from '../inbox/chats';
import { messageOf } from './chat';
import { Store } from '../state/store';

export interface TagEdit {
  op: 'add' | 'remove';
  tag: string;
}

interface State {
  /** chat id → edits asked for and not yet saved, in order. */
  pending: ReadonlyMap<string, readonly TagEdit[]>;
  /** chat id → the last failed save's message (its edits are dropped: the list shown is the service's). */
  errors: ReadonlyMap<string, string>;
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

class TagEditsStore extends Store<State> {
  private running = new Set<string>();

  constructor() {
    super({ pending: new Map(), errors: new Map() });
  }

  /** The tags to show for this chat: the latest known list with the unsaved edits applied. */
  shown(chat: Chat): string[] {
    return applyTagEdits(chat.tags, this.state.pending.get(chat.id) ?? []);
  }

  add(chatId: string, tag: string): void {
    const name = tag.trim();
    if (name) this.queue(chatId, { op: 'add', tag: name });
  }

  remove(chatId: string, tag: string): void {
    this.queue(chatId, { op: 'remove', tag });
  }

  private queue(chatId: string, edit: TagEdit): void {
    const pending = new Map(this.state.pending);
    pending.set(chatId, [...(pending.get(chatId) ?? []), edit]);
    const errors = new Map(this.state.errors);
    errors.delete(chatId);
    this.set({ pending, errors });
    if (!this.running.has(chatId)) void this.run(chatId);
  }

  /** Saves this chat's waiting edits, one save at a time, until none wait. */
  private async run(chatId: string): Promise<void> {
    this.running.add(chatId);
    try {
      for (;;) {
        const batch = this.state.pending.get(chatId) ?? [];
        if (batch.length === 0) return;
        try {
          // The freshest list: another tab's change this tab has not heard of yet is kept.
          const fresh = await api.getChat(chatId);
          chats.upsert(fresh);
          const tags = applyTagEdits(fresh.tags, batch);
          if (!sameList(tags, fresh.tags)) chats.upsert(await api.updateChat(chatId, { tags }));
        } catch (caught) {
          const errors = new Map(this.state.errors);
          errors.set(chatId, messageOf(caught));
          this.set({ errors });
        }
        const pending = new Map(this.state.pending);
        const rest = (pending.get(chatId) ?? []).slice(batch.length);
        if (rest.length) pending.set(chatId, rest);
        else pending.delete(chatId);
        this.set({ pending });
      }
    } finally {
      this.running.delete(chatId);
    }
  }
}

export const tagEdits = new TagEditsStore();
