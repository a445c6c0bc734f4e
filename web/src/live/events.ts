/**
 * The tab's one live connection: an EventSource on the contract's stream (§6.4), with ephemeral
 * events (chunks, typing). The browser reconnects on its own after a dropped connection and sends
 * `Last-Event-ID`, which the service honours, so nothing persisted is missed across a restart.
 * If the browser gives up (an HTTP error instead of a stream, or a connection refused), this module
 * reconnects itself with `cursor` = the last persisted event seen, and drops that cursor only if the
 * service answers that it no longer knows it (400), never because the service was unreachable.
 * The page's first reads wait for the stream (`ready`): a stream without a cursor replays nothing,
 * so a read made before it opened could miss what changed in between, while a read made after it
 * opened misses nothing (the service fixes the stream's start before it answers). If it fails
 * first, or takes longer than FIRST_READS_WAIT_MS, the reads go at once, without live updates.
 * Each later opening (`onReopen`) tells the cache to read again what the interruption's ephemeral
 * events (chunks) could not replay (live/cache.ts); reads made while it is open need nothing.
 *
 * A tab hidden for HIDDEN_RELEASE_MS gives its connection back (each held stream is a running
 * function: `npm run cost` prices a tab with and without this) and stops retrying; shown again, it
 * reconnects with `cursor` = the last persisted event it saw, so the stream replays what it missed.
 */
import { API, api, checkStillSignedIn } from '../api/client';
import type { EventEnvelope } from '../api/types';

export type LiveState = 'connecting' | 'open' | 'offline';
export type LiveListener = (event: EventEnvelope) => void;

import { EPHEMERAL_EVENT_TYPES, EVENT_TYPES } from './event-types';

export { EPHEMERAL_EVENT_TYPES, EVENT_TYPES };
const HIDDEN_RELEASE_MS = 2 * 60_000;
/**
 * The first reads wait this long at most for the stream to open: one that neither opens nor fails
 * (held by a proxy, a slow start) must not keep the page empty. Then they go at once, and the open
 * counts as a reopen.
 */
const FIRST_READS_WAIT_MS = 2000;
const MAX_BACKOFF_MS = 30_000;

class LiveEvents {
  private source: EventSource | undefined;
  private lastPersistedId: string | undefined;
  private listeners = new Set<LiveListener>();
  private reopenListeners = new Set<() => void>();
  /** Resolves when this start's stream has opened or failed once (or FIRST_READS_WAIT_MS passed). */
  private readyPromise: Promise<void>;
  private markReady: () => void = () => undefined;
  /** This start's stream has opened or failed once: reads run at once, and each open is a reopen. */
  private settled = false;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  private stateListeners = new Set<() => void>();
  private backoffMs = 1000;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private hiddenTimer: ReturnType<typeof setTimeout> | undefined;
  /** Hidden long enough: no connection and no retry until the tab is shown again. */
  private released = false;
  private started = false;
  state: LiveState = 'connecting';

  constructor() {
    this.readyPromise = this.newReady();
  }

  private newReady(): Promise<void> {
    return new Promise((resolve) => (this.markReady = resolve));
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    document.addEventListener('visibilitychange', this.onVisibility);
    this.settleTimer = setTimeout(() => this.settle(), FIRST_READS_WAIT_MS);
    this.connect();
  }

  stop(): void {
    this.started = false;
    if (this.settled) this.readyPromise = this.newReady();
    this.settled = false;
    clearTimeout(this.settleTimer);
    document.removeEventListener('visibilitychange', this.onVisibility);
    clearTimeout(this.retryTimer);
    clearTimeout(this.hiddenTimer);
    this.close();
    this.released = false;
    this.lastPersistedId = undefined;
  }

  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  /**
   * Resolves when a first read (the list, an opened chat) can miss no event: at once if this tab's
   * stream has opened (or failed) already, else as soon as it opens, or fails, or takes longer than
   * FIRST_READS_WAIT_MS (then the read goes without live updates, and the opening that follows is a
   * reopen).
   */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.settleTimer);
    this.markReady();
  }

  /** Each opening of the stream after the first: what was read before it may have missed events. */
  onReopen(listener: () => void): () => void {
    this.reopenListeners.add(listener);
    return () => this.reopenListeners.delete(listener);
  }
  onState(listener: () => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  private setState(state: LiveState) {
    if (this.state === state) return;
    this.state = state;
    for (const listener of this.stateListeners) listener();
  }

  private connect(): void {
    this.close();
    this.released = false;
    const params = new URLSearchParams({ ephemeral: 'true' });
    const withCursor = this.lastPersistedId;
    if (withCursor) params.set('cursor', withCursor);
    const source = new EventSource(`${API}/events/stream?${params}`);
    this.source = source;
    this.setState('connecting');
    let opened = false;
    source.onopen = () => {
      opened = true;
      this.backoffMs = 1000;
      this.setState('open');
      // The first open lets the first reads go, which start after the stream's start: nothing to re-read.
      if (!this.settled) this.settle();
      else for (const listener of this.reopenListeners) listener();
    };
    source.onerror = () => {
      this.settle();
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (an error answer, or a connection it could not make): reconnect
        // ourselves. It may have been a 401: the session ended (signed out everywhere, secret rotated).
        this.source = undefined;
        this.setState('offline');
        void checkStillSignedIn();
        if (opened || !withCursor || withCursor !== this.lastPersistedId) return this.retryLater();
        // Failed with a cursor before opening: the cursor is dropped only if the service refuses it
        // (400: unknown or expired; the re-read on reopen covers the gap). The service being down
        // keeps it, so the page resumes where it was when the service is back.
        void api.streamRefusesCursor(withCursor).then((refused) => {
          if (refused && this.lastPersistedId === withCursor) this.lastPersistedId = undefined;
          // Stopped, released or reconnected (the tab shown again) meanwhile: nothing to retry.
          if (this.started && !this.released && !this.source) this.retryLater();
        });
      } else {
        this.setState('connecting');
      }
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, this.onEvent);
  }

  private retryLater(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), this.backoffMs);
    this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2);
  }

  private close(): void {
    if (!this.source) return;
    for (const type of EVENT_TYPES) this.source.removeEventListener(type, this.onEvent);
    this.source.close();
    this.source = undefined;
  }

  private onEvent = (message: MessageEvent<string>) => {
    let envelope: EventEnvelope;
    try {
      envelope = JSON.parse(message.data) as EventEnvelope;
    } catch {
      return;
    }
    if (!EPHEMERAL_EVENT_TYPES.has(envelope.type)) this.lastPersistedId = envelope.id;
    for (const listener of this.listeners) listener(envelope);
  };

  /** Gives the connection back, and a pending retry too (it would connect a hidden tab again). */
  private release = () => {
    this.released = true;
    clearTimeout(this.retryTimer);
    this.close();
    this.setState('offline');
  };

  private onVisibility = () => {
    clearTimeout(this.hiddenTimer);
    if (document.visibilityState === 'hidden') {
      this.hiddenTimer = setTimeout(this.release, HIDDEN_RELEASE_MS);
    } else if ((this.released || !this.source) && this.started) {
      clearTimeout(this.retryTimer);
      this.connect();
    }
  };
}

export const live = new LiveEvents();
