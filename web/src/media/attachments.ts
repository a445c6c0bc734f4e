/**
 * The files the user is attaching to the next message of one chat: each uploads at once (with
 * progress), and the message goes out with their media ids once all are stored. A file the
 * service would refuse says why before any byte is sent; a failed upload keeps its chip with the
 * reason until removed; removing an uploaded file that no message holds deletes the medium.
 *
 * This is the page's own state (files and their progress, nothing the service can be asked
 * for), so it lives beside the composer rather than in the query cache: the one server write,
 * each upload, lands in the cache when its message does.
 */
import { api, ApiError } from '../api/client';
import type { Media, PublicConfig } from '../api/types';
import { refusalOf, uploadFile } from './uploads';
import { formatBytes } from '../shared/bytes';
import { useSyncExternalStore } from 'react';

export interface Pending {
  localId: string;
  name: string;
  size: number;
  type: string;
  status: 'uploading' | 'finishing' | 'done' | 'failed';
  /** 0..100 of the bytes sent. */
  progress: number;
  /** Why it was refused or failed (status `failed`). */
  error?: string;
  media?: Media;
}

interface State {
  items: Pending[];
}

export class PendingAttachments {
  private controllers = new Map<string, AbortController>();
  private state: State = { items: [] };
  private listeners = new Set<() => void>();

  constructor(
    private readonly chatId: string,
    private readonly config: () => PublicConfig,
  ) {}

  get snapshot(): State {
    return this.state;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private set(patch: Partial<State>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of this.listeners) listener();
  }

  get uploading(): boolean {
    return this.state.items.some((i) => i.status === 'uploading' || i.status === 'finishing');
  }

  /** The media of the finished uploads, in the order they were added. */
  get mediaIds(): string[] {
    return this.state.items.flatMap((i) => (i.status === 'done' && i.media ? [i.media.id] : []));
  }

  add(files: Iterable<File>, kind?: Media['kind']): void {
    for (const file of files) {
      const item: Pending = {
        localId: crypto.randomUUID(),
        name: file.name || 'upload.bin',
        size: file.size,
        type: file.type || 'application/octet-stream',
        status: 'uploading',
        progress: 0,
      };
      const refusal = refusalOf(this.config(), file, formatBytes);
      if (refusal) {
        this.set({ items: [...this.state.items, { ...item, status: 'failed', error: refusal }] });
        continue;
      }
      this.set({ items: [...this.state.items, item] });
      void this.upload(item.localId, file, kind);
    }
  }

  private async upload(localId: string, file: File, kind?: Media['kind']): Promise<void> {
    const controller = new AbortController();
    this.controllers.set(localId, controller);
    try {
      const media = await uploadFile(this.config(), this.chatId, file, {
        ...(kind ? { kind } : {}),
        signal: controller.signal,
        onProgress: (sent, total) => this.patch(localId, { progress: Math.min(100, Math.round((sent / total) * 100)) }),
        onFinishing: () => this.patch(localId, { status: 'finishing', progress: 100 }),
      });
      if (controller.signal.aborted) {
        // Removed while the service was recording it: take the medium back.
        void api.deleteMedia(media.id).catch(() => {});
        return;
      }
      this.patch(localId, { status: 'done', progress: 100, media });
    } catch (error) {
      if (controller.signal.aborted) return;
      this.patch(localId, { status: 'failed', error: reasonOf(error) });
    } finally {
      this.controllers.delete(localId);
    }
  }

  /** Takes a file back: stops its upload, or deletes its medium (no message holds it yet). */
  remove(localId: string): void {
    const item = this.state.items.find((i) => i.localId === localId);
    if (!item) return;
    this.controllers.get(localId)?.abort();
    if (item.status === 'done' && item.media) void api.deleteMedia(item.media.id).catch(() => {});
    this.set({ items: this.state.items.filter((i) => i.localId !== localId) });
  }

  /** The message holding the finished uploads was handed to the chat: they are its now. */
  sent(): void {
    this.set({ items: this.state.items.filter((i) => i.status !== 'done') });
  }

  /** The chat closed: stop uploads; finished but unsent media are deleted (nothing half-uploaded stays). */
  dispose(): void {
    for (const item of this.state.items) this.remove(item.localId);
  }

  private patch(localId: string, patch: Partial<Pending>): void {
    this.set({ items: this.state.items.map((i) => (i.localId === localId ? { ...i, ...patch } : i)) });
  }
}

function reasonOf(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 413) return `it is too large (${error.message})`;
    if (error.status === 415) return `its type is not accepted (${error.message})`;
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** The files being attached, re-rendering the caller as they change. */
export function useAttachments(attachments: PendingAttachments): State {
  return useSyncExternalStore(attachments.subscribe, () => attachments.snapshot);
}
