/**
 * The contract's resource shapes (§2), snake_case as on the wire, and the small rules every
 * layer shares about them. Below both core/ and store/: each imports it, it imports neither
 * (only the schema library, platform/zod.ts, which imports nothing of the project).
 *
 * Each resource is declared once, as a zod schema: its TypeScript type (`z.infer`), the list
 * of fields the store copies onto the wire (`*_FIELDS`, the schema's keys in order) and its
 * OpenAPI component (model/replies.ts names it) all come from it. No handler parses a
 * response with these: they describe what the service writes.
 */
import * as z from './platform/zod.js';

/** A timestamp as the service writes it, and a generated id (documented in the OpenAPI components). */
export const timestamp = z
  .string()
  .check(z.meta({ format: 'date-time', description: 'ISO 8601, UTC, milliseconds (§1.4).' }));
export const id = z.string().check(z.meta({ description: '21-character id (§1.3).' }));
const freeObject = z.record(z.string(), z.unknown());
const count = z.int().check(z.nonnegative());

/** The keys of an object schema, in declaration order: the fields the store copies onto the wire. */
const fieldsOf = <S extends z.ZodMiniObject>(schema: S) =>
  Object.freeze(Object.keys(schema.shape)) as readonly (keyof z.infer<S> & string)[];

export const MessageRole = z.enum(['user', 'agent', 'system', 'tool']);
export type MessageRole = z.infer<typeof MessageRole>;
export const TitleSource = z.enum(['default', 'auto', 'manual']);
export type TitleSource = z.infer<typeof TitleSource>;
export const StreamState = z.enum(['none', 'streaming', 'complete', 'cancelled']);
export type StreamState = z.infer<typeof StreamState>;
export const MediaKind = z.enum(['image', 'audio', 'file']);
export type MediaKind = z.infer<typeof MediaKind>;

/** A chat (§2.1). */
export const Chat = z.strictObject({
  id,
  is_archived: z.boolean(),
  title: z.string(),
  title_source: TitleSource,
  tags: z.array(z.string()),
  pinned: z.boolean(),
  agent_ids: z.array(z.string()),
  model_id: z.string(),
  last_message_preview: z.nullable(z.string()),
  last_message_role: z.nullable(MessageRole),
  pending_requests_count: count,
  last_read_at: z.nullable(timestamp),
  unread_count: count,
  notifications_muted: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
  last_message_at: z.nullable(timestamp),
});
export type Chat = z.infer<typeof Chat>;
export const CHAT_FIELDS = fieldsOf(Chat);

/** A message (§2.2). */
export const Message = z.strictObject({
  id,
  chat_id: id,
  role: MessageRole,
  sender_id: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  content_final: z.nullable(z.string()),
  content_partial: z.nullable(z.string()),
  stream_state: StreamState,
  model_id: z.nullable(z.string()),
  trace: z.nullable(freeObject),
});
export type Message = z.infer<typeof Message>;
export const MESSAGE_FIELDS = fieldsOf(Message);

/** A media record (§2.4). */
export const Media = z.strictObject({
  id,
  chat_id: id,
  message_id: z.nullable(id),
  storage_path: z.string(),
  thumbnail_path: z.nullable(z.string()),
  filename: z.string(),
  content_type: z.string(),
  byte_size: z.int().check(z.positive()),
  kind: MediaKind,
  created_at: timestamp,
});
export type Media = z.infer<typeof Media>;
export const MEDIA_FIELDS = fieldsOf(Media);

export const RequestType = z.enum(['choice', 'text_input', 'form']);
export type RequestType = z.infer<typeof RequestType>;
/** A choice option's variant and a form field's type (§2.3.1; the configurations: model/request-config.ts). */
export const OptionVariant = z.enum(['primary', 'secondary', 'danger']);
export type OptionVariant = z.infer<typeof OptionVariant>;
export const FormFieldType = z.enum(['text', 'textarea', 'select', 'multiselect', 'checkbox', 'date']);
export type FormFieldType = z.infer<typeof FormFieldType>;
export const RequestStatus = z.enum(['pending', 'resolved', 'cancelled']);
export type RequestStatus = z.infer<typeof RequestStatus>;

/** An interactive request (§2.3); the stored item holds exactly these fields. */
/** A request's deadline as stored and shown (§5.5.6): what happens at `at` if it is still pending. */
export const RequestDeadline = z.strictObject({
  at: timestamp,
  on_expiry: z.enum(['cancel', 'resolve']),
  default_payload: z
    .nullable(freeObject)
    .check(
      z.meta({ description: 'For `resolve`: the normalized resolution payload applied (§2.3.2); null for `cancel`.' }),
    ),
  remind_before_seconds: z
    .array(z.int())
    .check(z.meta({ description: 'Reminders, in seconds before `at`, largest first; empty when none.' })),
});
export type RequestDeadline = z.infer<typeof RequestDeadline>;

/** When a deadline's reminder `before` seconds ahead of it falls due (ms). */
export const reminderAtMs = (deadline: RequestDeadline, before: number): number =>
  Date.parse(deadline.at) - before * 1000;

/**
 * When a pending request's deadline next needs its timer (ms): its soonest reminder after the one
 * `sentBefore` seconds before (none given: after none), else its expiry. The store keeps it on
 * the request for the sweep that catches a lost timer (Keys.requestTimerDue).
 */
export function nextTimerMs(deadline: RequestDeadline, sentBefore?: number): number {
  const later = deadline.remind_before_seconds.filter((b) => sentBefore === undefined || b < sentBefore);
  return later.length > 0 ? reminderAtMs(deadline, Math.max(...later)) : Date.parse(deadline.at);
}

export const Request = z.strictObject({
  id,
  chat_id: id,
  type: RequestType,
  status: RequestStatus,
  title: z.string(),
  body: z.nullable(z.string()),
  config: freeObject.check(z.meta({ description: 'The normalized type-specific configuration (§2.3.1).' })),
  created_at: timestamp,
  resolved_at: z.nullable(timestamp),
  resolved_by: z.nullable(z.enum(['user', 'backend'])),
  resolution_payload: z.nullable(freeObject).check(z.meta({ description: 'Normalized per type (§2.3.2).' })),
  trace: z.nullable(freeObject),
  deadline: z.nullable(RequestDeadline),
  expired_at: z
    .nullable(timestamp)
    .check(z.meta({ description: 'When its deadline closed the request (§5.5.6); null otherwise.' })),
});
export type RequestRecord = z.infer<typeof Request>;
export const REQUEST_FIELDS = fieldsOf(Request);

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

/** One entry of the decision log (§5.5.6): a request's closing, chained to the one before by its hash. */
export const DecisionEntry = z.strictObject({
  seq: z.int().check(z.meta({ description: '1, 2, 3… without gaps over the whole instance.' })),
  at: timestamp,
  chat_id: id,
  request_id: id,
  type: RequestType,
  title: z.string(),
  action: z.enum(['resolved', 'cancelled', 'expired']),
  actor: z.enum(['session', 'secret', 'open', 'deadline']),
  resolved_by: z.nullable(z.enum(['user', 'backend'])),
  payload: z.nullable(freeObject),
  prev_hash: z.string().check(z.meta({ description: "The previous entry's hash; 64 zeros for entry 1." })),
  hash: z.string().check(
    z.meta({
      description:
        'Lowercase hex SHA-256 of the UTF-8 bytes of prev_hash followed by the canonical JSON of the entry without hash.',
    }),
  ),
});
export type DecisionEntry = z.infer<typeof DecisionEntry>;
export type DecisionActor = DecisionEntry['actor'];
