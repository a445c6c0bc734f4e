/** The event types of the stream (contract §6.1), on their own: the browser tests import them too. */
export const EVENT_TYPES = [
  'chat.created',
  'chat.updated',
  'chat.archived',
  'chat.unarchived',
  'chat.read',
  'chat.unread',
  'chat.typing',
  'chat.user_typing',
  'message.created',
  'message.streaming.chunk',
  'message.streaming.complete',
  'request.created',
  'request.resolved',
  'request.cancelled',
  'media.attached',
] as const;

/** Not replayable, never sent to webhooks (contract §6.1). */
export const EPHEMERAL_EVENT_TYPES: ReadonlySet<string> = new Set([
  'chat.typing',
  'chat.user_typing',
  'message.streaming.chunk',
]);
