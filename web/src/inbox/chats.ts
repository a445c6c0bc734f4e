/**
 * The chats the app knows: every chat read so far by id, and the ordered list of the view shown
 * (inbox or archived). Any event about a chat re-reads that chat once (coalesced), so previews,
 * badges and order follow the service's own derived fields instead of being guessed here.
 * The list may be filtered by tag and agent (the service filters the reads; a chat re-read live
 * joins or leaves the list by the same test).
 */
import { api, ApiError } from '../api/client';
import type { Chat, EventEnvelope } from '../api/types';
import type { InboxFilter } from '../router';
import { Store } from '../state/store';

export type ChatsView = 'inbox' | 'archived';

interface State {
  view: ChatsView;
  /** GET /chats's `tag` and `agentId` (§5.3.2); empty: every chat of the view. */
  filter: InboxFilter;
  /** The view's chats in the service's order (§1.9: pinned first, then newest activity, then id). */
  list: Chat[];
  byId: ReadonlyMap<string, Chat>;
  loading: boolean;
  error: string | undefined;
}

const PAGE = 100;
/** The inbox reads this many chats at most (pages of 100 after the first). */
const MAX_LISTED = 1000;
const COALESCE_MS = 60;

export function compareChats(a: Chat, b: Chat): number {
  if (a.pinned !== b.pinned) return a.pinned ? -1 : 1;
  const at = a.last_message_at ? Date.parse(a.last_message_at) : 0;
  const bt = b.last_message_at ? Date.parse(b.last_message_at) : 0;
  if (at !== bt) return bt - at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** The service's filter test (§5.3.2: exact tag, agent among the chat's agents). */
export const matchesFilter = (chat: Chat, filter: InboxFilter): boolean =>
  (!filter.tag || chat.tags.includes(filter.tag)) && (!filter.agentId || chat.agent_ids.includes(filter.agentId));

const sameFilter = (a: InboxFilter, b: InboxFilter): boolean => a.tag === b.tag && a.agentId === b.agentId;

class ChatsStore extends Store<State> {
  private loadSeq = 0;
  private stale = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super({ view: 'inbox', filter: {}, list: [], byId: new Map(), loading: true, error: undefined });
  }

  /** Forget everything (sign-out): the next view read starts afresh. */
  reset(): void {
    this.loadSeq = 0;
    this.set({ view: 'inbox', filter: {}, list: [], byId: new Map(), loading: true, error: undefined });
  }

  get(chatId: string): Chat | undefined {
    return this.state.byId.get(chatId);
  }

  setView(view: ChatsView, filter: InboxFilter = this.state.filter): void {
    if (view === this.state.view && sameFilter(filter, this.state.filter) && this.loadSeq > 0) return;
    this.set({ view, filter, list: [], loading: true, error: undefined });
    void this.load();
  }

  async load(): Promise<void> {
    const seq = ++this.loadSeq;
    const archived = this.state.view === 'archived';
    const { tag, agentId } = this.state.filter;
    let cursor: string | null = null;
    const seen: Chat[] = [];
    try {
      do {
        const page = await api.listChats({ archived, tag, agentId, cursor, limit: PAGE });
        if (seq !== this.loadSeq) return;
        seen.push(...page.data);
        this.remember(page.data);
        this.set({ list: [...seen], loading: false, error: undefined });
        cursor = page.cursor.hasMore ? page.cursor.next : null;
      } while (cursor && seen.length < MAX_LISTED);
    } catch (error) {
      if (seq !== this.loadSeq) return;
      this.set({ loading: false, error: error instanceof ApiError ? error.message : String(error) });
    }
  }

  /** A chat read or written elsewhere (the open chat, a create, a PATCH answer). */
  upsert(chat: Chat): void {
    this.remember([chat]);
    const inView = chat.is_archived === (this.state.view === 'archived') && matchesFilter(chat, this.state.filter);
    const rest = this.state.list.filter((c) => c.id !== chat.id);
    if (inView) {
      const index = rest.findIndex((c) => compareChats(chat, c) < 0);
      rest.splice(index === -1 ? rest.length : index, 0, chat);
    }
    this.set({ list: rest });
  }

  /** Re-read a chat soon (coalescing bursts of events about it). */
  refresh(chatId: string): void {
    this.stale.add(chatId);
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const ids = [...this.stale];
      this.stale.clear();
      for (const id of ids) void this.refreshNow(id);
    }, COALESCE_MS);
  }

  async refreshNow(chatId: string): Promise<Chat | undefined> {
    try {
      const chat = await api.getChat(chatId);
      this.upsert(chat);
      return chat;
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        const byId = new Map(this.state.byId);
        byId.delete(chatId);
        this.set({ list: this.state.list.filter((c) => c.id !== chatId), byId });
      }
      return undefined;
    }
  }

  onEvent = (event: EventEnvelope): void => {
    const chatId = event.payload.chatId;
    if (typeof chatId !== 'string') return;
    if (event.type === 'message.streaming.chunk' || event.type.endsWith('typing')) return;
    this.refresh(chatId);
  };

  private remember(chats: Chat[]): void {
    const byId = new Map(this.state.byId);
    for (const chat of chats) byId.set(chat.id, chat);
    this.state = { ...this.state, byId };
  }
}

export const chats = new ChatsStore();
