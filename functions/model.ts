/**
 * The contract's resource shapes (§2), snake_case as on the wire, and the small rules every
 * layer shares about them. Below both core/ and store/: each imports it, it imports neither.
 */
export type TitleSource = 'default' | 'auto' | 'manual';
export type MessageRole = 'user' | 'agent' | 'system' | 'tool';
export type StreamState = 'none' | 'streaming' | 'complete' | 'cancelled';

export interface Chat {
  id: string;
  is_archived: boolean;
  title: string;
  title_source: TitleSource;
  tags: string[];
  pinned: boolean;
  agent_ids: string[];
  model_id: string;
  last_message_preview: string | null;
  last_message_role: MessageRole | null;
  pending_requests_count: number;
  last_read_at: string | null;
  unread_count: number;
  notifications_muted: boolean;
  created_at: string;
  updated_at: string;
  last_message_at: string | null;
}

export const CHAT_FIELDS = [
  'id',
  'is_archived',
  'title',
  'title_source',
  'tags',
  'pinned',
  'agent_ids',
  'model_id',
  'last_message_preview',
  'last_message_role',
  'pending_requests_count',
  'last_read_at',
  'unread_count',
  'notifications_muted',
  'created_at',
  'updated_at',
  'last_message_at',
] as const satisfies readonly (keyof Chat)[];

export interface Message {
  id: string;
  chat_id: string;
  role: MessageRole;
  sender_id: string;
  created_at: string;
  updated_at: string;
  content_final: string | null;
  content_partial: string | null;
  stream_state: StreamState;
  model_id: string | null;
  trace: Record<string, unknown> | null;
}

export const MESSAGE_FIELDS = [
  'id',
  'chat_id',
  'role',
  'sender_id',
  'created_at',
  'updated_at',
  'content_final',
  'content_partial',
  'stream_state',
  'model_id',
  'trace',
] as const satisfies readonly (keyof Message)[];

export type MediaKind = 'image' | 'audio' | 'file';

export interface Media {
  id: string;
  chat_id: string;
  message_id: string | null;
  storage_path: string;
  thumbnail_path: string | null;
  filename: string;
  content_type: string;
  byte_size: number;
  kind: MediaKind;
  created_at: string;
}

export const MEDIA_FIELDS = [
  'id',
  'chat_id',
  'message_id',
  'storage_path',
  'thumbnail_path',
  'filename',
  'content_type',
  'byte_size',
  'kind',
  'created_at',
] as const satisfies readonly (keyof Media)[];

/** Copies exactly the listed fields (every field present, null when absent: §1.6). */
export function pick<T>(source: object, fields: readonly (keyof T & string)[]): T {
  const out: Record<string, unknown> = {};
  const item = source as Record<string, unknown>;
  for (const f of fields) out[f] = item[f] ?? null;
  return out as T;
}

/** Fixed constants (§12.4). */
export const PREVIEW_MAX_CHARS = 180;
export const DEFAULT_CHAT_TITLE = 'New Chat';
export const USER_SENDER_ID = 'user:primary';

/** The first `max` characters (code points, so no surrogate pair is split). */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join('');
}

/**
 * A message's preview (§3.1): its trimmed text cut to 180 characters, else the label of its
 * linked media (`Voice note` / `Attachment`, fixed when the media was linked), else none.
 */
export function previewOf(
  message: Pick<Message, 'content_final' | 'content_partial'> & { media_preview?: string | undefined },
): string | null {
  const text = (message.content_final ?? message.content_partial ?? '').trim();
  if (text !== '') return cut(text, PREVIEW_MAX_CHARS);
  return message.media_preview ?? null;
}

/**
 * A message's preview as the full recompute sees it (§3.1, §3.3): its text, else by every medium
 * linked to it so far (`Voice note` when all are audio), else none. Messages stored before
 * `linked_media` existed fall back to their creation label.
 */
export function recomputedPreviewOf(
  message: Pick<Message, 'content_final' | 'content_partial'> & {
    media_preview?: string | undefined;
    linked_media?: 'audio' | 'other' | undefined;
  },
): string | null {
  const { linked_media: linked } = message;
  if (linked === undefined) return previewOf(message);
  return previewOf({ ...message, media_preview: linked === 'audio' ? 'Voice note' : 'Attachment' });
}
