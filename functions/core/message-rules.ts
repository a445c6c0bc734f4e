/**
 * The message rules creation (messages.ts, and a new chat's first message in chat-create.ts)
 * and the streaming lifecycle (streaming.ts) share: the size cap and its 413, the 404, the
 * not-streaming 409, and when a stream is overdue.
 */
import { ConflictError, NotFoundError, PayloadTooLargeError } from '../errors.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { Message, StreamState } from '../model.js';

/**
 * A message item holds at most 400 KB, and the final text of a stream is written into it
 * once, so a message's text is bounded (with room for its other fields and trace).
 */
export const MAX_CONTENT_BYTES = 300_000;

export const messageNotFound = (messageId: string) => NotFoundError.of('messageId', messageId, 'Message not found.');

export const notStreaming = (messageId: string, state: StreamState) =>
  new ConflictError('Message is not in streaming state.', { messageId, streamState: state });

/** 413 naming the field that carried the text (§1.7: a rule violation tied to a field). */
export const tooLong = (field = 'content') =>
  new PayloadTooLargeError(`Message content exceeds ${MAX_CONTENT_BYTES} bytes.`, {
    field,
    maxContentBytes: MAX_CONTENT_BYTES,
  });

export const idleLimitMs = (config: InstanceConfig) => config.server.streamTimeoutSeconds * 1000;

/** No activity for longer than the timeout (measured from updated_at, §4.2). */
export function isOverdue(message: Pick<Message, 'updated_at'>, config: InstanceConfig, nowMs: number): boolean {
  return nowMs - Date.parse(message.updated_at) > idleLimitMs(config);
}

/**
 * When an overdue stream was cancelled by its timeout: its last activity plus the timeout (issue
 * 33 item 22). One instant, whoever makes the cancel real (the timer, a write that finds the
 * stream overdue) and whenever, and the one a read shows before that: the message's updated_at is
 * never its last chunk's time once it reads as cancelled, and every read agrees.
 */
export const timedOutAt = (message: Pick<Message, 'updated_at'>, config: InstanceConfig): string =>
  new Date(Date.parse(message.updated_at) + idleLimitMs(config)).toISOString();
