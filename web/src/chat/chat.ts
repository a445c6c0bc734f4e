/**
 * One open chat: its messages (oldest first in `messages`; pages of the service's newest-first
 * listing prepended as the user scrolls up), its pending requests, who is typing, and the user's
 * own messages still on their way. Live events patch it in place; streamed chunks render at most
 * once per frame.
 */
import { api, ApiError, newIdempotencyKey } from '../api/client';
import type { ChatRequest, EventEnvelope, Message, Resolution } from '../api/types';
import { compareMessages, withNewestPage } from './message-order';
import { Store } from '../state/store';

export interface Outgoing {
  localId: string;
  content: string;
  /** Attached media (uploaded already), sent as `trace.mediaIds`. */
  mediaIds?: string[];
  idempotencyKey: string;
  status: 'sending' | 'failed';
  error?: string;
  createdAt: string;
}

interface State {
  chatId: string;
  messages: Message[];
  outgoing: Outgoing[];
  requests: ChatRequest[];
  /** Requests answered or cancelled, oldest first: shown in the history where they were asked. */
  closed: ChatRequest[];
  /** agent id → when its typing indicator ends (ms since epoch). */
  typing: Record<string, number>;
  olderCursor: string | null;
  hasOlder: boolean;
  loading: boolean;
  loadingOlder: boolean;
  error: string | undefined;
}

const PAGE = 50;
/** Pages read to reach a message deep in history (the listing's maximum, §5.4.2). */
const REVEAL_PAGE = 200;
const TYPING_MS = 6000;

export class ChatStore extends Store<State> {
  private typingTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private olderInFlight: Promise<void> | undefined;

  constructor(chatId: string) {
    super({
      chatId,
      messages: [],
      outgoing: [],
      requests: [],
      closed: [],
      typing: {},
      olderCursor: null,
      hasOlder: false,
      loading: true,
      loadingOlder: false,
      error: undefined,
    });
  }

  /** (Again) in use: React's StrictMode (the dev server) disposes a store and then uses it again. */
  attach(): void {
    this.disposed = false;
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.typingTimer);
  }

  /** The newest page and the requests (pending, and closed ones for the history); also after a reconnect, keeping older pages read. */
  async load(): Promise<void> {
    const { chatId } = this.state;
    try {
      const [page, requests] = await Promise.all([api.listMessages(chatId, { limit: PAGE }), api.allRequests(chatId)]);
      if (this.disposed) return;
      const newest = [...page.data].reverse();
      const first = this.state.loading;
      this.set({
        // Older pages already read stay; live events since the read are not undone (message-order.ts).
        messages: withNewestPage(this.state.messages, newest, first),
        ...splitRequests(requests.data),
        loading: false,
        error: undefined,
        ...(first ? { olderCursor: page.cursor.next, hasOlder: page.cursor.hasMore } : {}),
      });
    } catch (error) {
      if (this.disposed) return;
      this.set({ loading: false, error: messageOf(error) });
    }
  }

  /** The next older page (the one already on its way, if any). */
  loadOlder(limit = PAGE): Promise<void> {
    const { hasOlder, olderCursor } = this.state;
    if (this.olderInFlight) return this.olderInFlight;
    if (!hasOlder || !olderCursor) return Promise.resolve();
    this.olderInFlight = this.readOlder(olderCursor, limit).finally(() => {
      this.olderInFlight = undefined;
    });
    return this.olderInFlight;
  }

  /**
   * Reads older pages until this message is among those read (a search hit deep in history);
   * false when the chat has no such message (or a read failed).
   */
  async reveal(messageId: string): Promise<boolean> {
    const has = () => this.state.messages.some((m) => m.id === messageId);
    await this.settled();
    while (!this.disposed && !has() && this.state.hasOlder && this.state.olderCursor && !this.state.error) {
      await this.loadOlder(REVEAL_PAGE);
    }
    return has();
  }

  /** Resolves once the first page has been read (or failed). */
  private settled(): Promise<void> {
    if (!this.state.loading) return Promise.resolve();
    return new Promise((resolve) => {
      const off = this.subscribe(() => {
        if (this.state.loading) return;
        off();
        resolve();
      });
    });
  }

  private async readOlder(olderCursor: string, limit: number): Promise<void> {
    const { chatId } = this.state;
    this.set({ loadingOlder: true });
    try {
      const page = await api.listMessages(chatId, { cursor: olderCursor, limit });
      if (this.disposed) return;
      const known = new Set(this.state.messages.map((m) => m.id));
      const older = [...page.data].reverse().filter((m) => !known.has(m.id));
      this.set({
        messages: [...older, ...this.state.messages],
        olderCursor: page.cursor.next,
        hasOlder: page.cursor.hasMore,
        loadingOlder: false,
      });
    } catch (error) {
      if (this.disposed) return;
      this.set({ loadingOlder: false, error: messageOf(error) });
    }
  }

  /** Shown at once; sent with an Idempotency-Key that a retry reuses, so it is never stored twice. */
  send(content: string, mediaIds: string[] = []): void {
    const outgoing: Outgoing = {
      localId: newIdempotencyKey(),
      content,
      ...(mediaIds.length ? { mediaIds } : {}),
      idempotencyKey: newIdempotencyKey(),
      status: 'sending',
      createdAt: new Date().toISOString(),
    };
    this.set({ outgoing: [...this.state.outgoing, outgoing] });
    void this.deliver(outgoing);
  }

  retry(localId: string): void {
    const outgoing = this.state.outgoing.find((o) => o.localId === localId);
    if (!outgoing || outgoing.status !== 'failed') return;
    const again = { ...outgoing, status: 'sending' as const, error: undefined };
    this.replaceOutgoing(again);
    void this.deliver(again);
  }

  discard(localId: string): void {
    this.set({ outgoing: this.state.outgoing.filter((o) => o.localId !== localId) });
  }

  private async deliver(outgoing: Outgoing): Promise<void> {
    try {
      const message = await api.sendMessage(
        this.state.chatId,
        outgoing.content,
        outgoing.idempotencyKey,
        outgoing.mediaIds,
      );
      if (this.disposed) return;
      this.set({ outgoing: this.state.outgoing.filter((o) => o.localId !== outgoing.localId) });
      this.upsertMessage(message);
    } catch (error) {
      if (this.disposed) return;
      this.replaceOutgoing({ ...outgoing, status: 'failed', error: messageOf(error) });
    }
  }

  /**
   * The service stored one of this page's own messages (its event came before the POST's answer, or
   * the answer was lost): the oldest unsent copy with that text is that message, so it is no longer
   * shown as sending or failed, and no Retry is offered for what is already stored.
   */
  private settleOutgoing(message: Message): void {
    if (message.role !== 'user') return;
    const mine = this.state.outgoing.find((o) => o.content === message.content_final);
    if (mine) this.set({ outgoing: this.state.outgoing.filter((o) => o !== mine) });
  }

  private replaceOutgoing(next: Outgoing): void {
    this.set({ outgoing: this.state.outgoing.map((o) => (o.localId === next.localId ? next : o)) });
  }

  async resolve(request: ChatRequest, resolution: Resolution, idempotencyKey: string): Promise<void> {
    const resolved = await api.resolveRequest(request.id, resolution, idempotencyKey);
    if (this.disposed) return;
    this.closeRequest(request.id, () => resolved);
  }

  onEvent = (event: EventEnvelope): void => {
    if (event.payload.chatId !== this.state.chatId) return;
    switch (event.type) {
      case 'message.created': {
        const p = event.payload;
        const message: Message = {
          id: p.messageId,
          chat_id: this.state.chatId,
          role: p.role,
          sender_id: p.senderId,
          created_at: p.createdAt,
          updated_at: p.createdAt,
          content_final: p.contentFinal,
          content_partial: null,
          stream_state: p.streamState,
          model_id: null,
          // Absent for a chat's first message.
          trace: p.trace ?? null,
        };
        const existing = this.state.messages.find((m) => m.id === message.id);
        if (!existing) {
          this.settleOutgoing(message);
          this.upsertMessage(message);
        }
        if (message.role === 'agent') this.stopTyping(message.sender_id);
        break;
      }
      case 'message.streaming.chunk': {
        const { messageId: id, deltaText: delta } = event.payload;
        const messages = this.state.messages;
        const index = messages.findIndex((m) => m.id === id);
        if (index === -1) return;
        const m = messages[index]!;
        if (m.stream_state !== 'streaming') return;
        const next = messages.slice();
        next[index] = { ...m, content_partial: (m.content_partial ?? '') + delta, updated_at: event.timestamp };
        this.setSoon({ messages: next });
        break;
      }
      case 'message.streaming.complete': {
        const { messageId: id, streamState: state, finalText } = event.payload;
        this.patchMessage(id, (m) => ({
          ...m,
          stream_state: state,
          content_final: state === 'complete' ? (finalText ?? m.content_partial) : null,
          content_partial: state === 'complete' ? null : m.content_partial,
          updated_at: event.timestamp,
        }));
        break;
      }
      case 'request.created':
        void this.reloadRequests();
        break;
      case 'request.resolved':
      case 'request.cancelled': {
        const p = event.payload;
        const known = this.closeRequest(p.requestId, (r) => ({
          ...r,
          status: p.status,
          resolved_at: event.timestamp,
          resolved_by: 'senderId' in p ? p.senderId : r.resolved_by,
          resolution_payload: p.resolution_payload,
        }));
        // One this page never saw pending (asked and answered between reads): read them all.
        if (!known) void this.reloadRequests();
        break;
      }
      case 'chat.typing': {
        const { agentId } = event.payload;
        this.set({ typing: { ...this.state.typing, [agentId]: Date.now() + TYPING_MS } });
        this.scheduleTypingExpiry();
        break;
      }
      case 'media.attached': {
        // Attachments render from the message's trace; a later upload to a known message re-reads it.
        const { messageId } = event.payload;
        if (messageId !== null && this.state.messages.some((m) => m.id === messageId)) void this.load();
        break;
      }
    }
  };

  private async reloadRequests(): Promise<void> {
    try {
      const requests = await api.allRequests(this.state.chatId);
      if (!this.disposed) this.set(splitRequests(requests.data));
    } catch {
      // The next event or reconnect reads them again.
    }
  }

  /**
   * A pending request answered or cancelled moves to the history (`closed`) as `close` makes it;
   * false when this page did not have it pending (nor closed already).
   */
  private closeRequest(id: string, close: (pending: ChatRequest) => ChatRequest): boolean {
    const pending = this.state.requests.find((r) => r.id === id);
    if (!pending) return this.state.closed.some((r) => r.id === id);
    const closed = [...this.state.closed.filter((r) => r.id !== id), close(pending)];
    closed.sort(compareRequests);
    this.set({ requests: this.state.requests.filter((r) => r.id !== id), closed });
    return true;
  }

  private upsertMessage(message: Message): void {
    const messages = this.state.messages.filter((m) => m.id !== message.id);
    let index = messages.length;
    while (index > 0 && compareMessages(messages[index - 1]!, message) > 0) index--;
    messages.splice(index, 0, message);
    this.set({ messages });
  }

  private patchMessage(id: string, patch: (m: Message) => Message): void {
    const index = this.state.messages.findIndex((m) => m.id === id);
    if (index === -1) {
      // A message this page never saw (it began before the page was open): read the newest page.
      void this.load();
      return;
    }
    const messages = this.state.messages.slice();
    messages[index] = patch(messages[index]!);
    this.set({ messages });
  }

  private stopTyping(agentId: string): void {
    if (!(agentId in this.state.typing)) return;
    const typing = { ...this.state.typing };
    delete typing[agentId];
    this.set({ typing });
  }

  private scheduleTypingExpiry(): void {
    clearTimeout(this.typingTimer);
    const ends = Object.values(this.state.typing);
    if (!ends.length) return;
    const next = Math.min(...ends);
    this.typingTimer = setTimeout(
      () => {
        const now = Date.now();
        const typing = Object.fromEntries(Object.entries(this.state.typing).filter(([, end]) => end > now));
        this.set({ typing });
        this.scheduleTypingExpiry();
      },
      Math.max(0, next - Date.now()) + 10,
    );
  }
}

export const messageOf = (error: unknown): string =>
  error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);

/** Oldest first, as the service lists them (§5.5.2: `created_at`, then `id`). */
function compareRequests(a: ChatRequest, b: ChatRequest): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A chat's requests (status=all) as the pending ones and the closed ones. */
function splitRequests(all: ChatRequest[]): { requests: ChatRequest[]; closed: ChatRequest[] } {
  return {
    requests: all.filter((r) => r.status === 'pending'),
    closed: all.filter((r) => r.status !== 'pending').sort(compareRequests),
  };
}
