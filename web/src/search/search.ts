/**
 * The search box's state: what is typed, the scope, and the hits of the last query run (GET
 * /search, §5.7 and §9), pages appended by cursor. Typing runs the query after a pause; Enter
 * or a scope change runs it at once; an answer to a query no longer current is dropped.
 */
import { api } from '../api/client';
import type { ChatHit, MessageHit, SearchScope } from '../api/types';
import { messageOf } from '../chat/chat';
import { Store } from '../state/store';

interface State {
  /** The box's text; the results view shows while it is not blank. */
  text: string;
  scope: SearchScope;
  /** The query the hits below answer (trimmed), or '' before the first answer. */
  query: string;
  chats: ChatHit[];
  messages: MessageHit[];
  cursor: string | null;
  hasMore: boolean;
  loading: boolean;
  loadingMore: boolean;
  error: string | undefined;
}

export const SEARCH_PAGE = 20;
const DEBOUNCE_MS = 250;

class SearchStore extends Store<State> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private controller: AbortController | undefined;
  private seq = 0;

  constructor() {
    super({
      text: '',
      scope: 'all',
      query: '',
      chats: [],
      messages: [],
      cursor: null,
      hasMore: false,
      loading: false,
      loadingMore: false,
      error: undefined,
    });
  }

  setText(text: string): void {
    this.set({ text });
    clearTimeout(this.timer);
    if (!text.trim()) {
      this.clear();
      return;
    }
    this.timer = setTimeout(() => void this.run(), DEBOUNCE_MS);
  }

  setScope(scope: SearchScope): void {
    this.set({ scope });
    if (this.state.text.trim()) void this.run();
  }

  clear(): void {
    clearTimeout(this.timer);
    this.controller?.abort();
    this.seq++;
    this.set({
      text: '',
      query: '',
      chats: [],
      messages: [],
      cursor: null,
      hasMore: false,
      loading: false,
      loadingMore: false,
      error: undefined,
    });
  }

  /** The first page of the box's text, now (Enter). */
  async run(): Promise<void> {
    clearTimeout(this.timer);
    const q = this.state.text.trim();
    if (!q) return;
    await this.fetch(q, null);
  }

  async more(): Promise<void> {
    const { query, cursor, hasMore, loading, loadingMore } = this.state;
    if (!query || !cursor || !hasMore || loading || loadingMore) return;
    await this.fetch(query, cursor);
  }

  private async fetch(q: string, cursor: string | null): Promise<void> {
    this.controller?.abort();
    const controller = (this.controller = new AbortController());
    const seq = ++this.seq;
    const scope = this.state.scope;
    this.set(cursor ? { loadingMore: true, error: undefined } : { loading: true, error: undefined });
    try {
      const page = await api.search({ q, scope, cursor, limit: SEARCH_PAGE }, controller.signal);
      if (seq !== this.seq) return;
      this.set({
        query: q,
        chats: cursor ? [...this.state.chats, ...page.chats] : page.chats,
        messages: cursor ? [...this.state.messages, ...page.messages] : page.messages,
        cursor: page.cursor.next,
        hasMore: page.cursor.hasMore,
        loading: false,
        loadingMore: false,
      });
    } catch (error) {
      if (seq !== this.seq) return;
      this.set({ loading: false, loadingMore: false, error: messageOf(error) });
    }
  }
}

export const search = new SearchStore();
