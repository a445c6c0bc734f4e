/** A minimal observable store for React's useSyncExternalStore: immutable snapshots, batched notify. */
import { useSyncExternalStore } from 'react';

export abstract class Store<S> {
  private listeners = new Set<() => void>();
  private scheduled = false;
  constructor(protected state: S) {}

  get snapshot(): S {
    return this.state;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  protected set(patch: Partial<S>): void {
    this.state = { ...this.state, ...patch };
    this.notify();
  }

  /** Renders at most once per animation frame however many updates arrive (streamed chunks). */
  protected setSoon(patch: Partial<S>): void {
    this.state = { ...this.state, ...patch };
    if (this.scheduled) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.notify();
    };
    // A hidden tab gets no animation frames; a timer still lets its state settle.
    if (document.visibilityState === 'visible') requestAnimationFrame(flush);
    else setTimeout(flush, 100);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }
}

export function useStore<S>(store: Store<S>): S {
  return useSyncExternalStore(store.subscribe, () => store.snapshot);
}
