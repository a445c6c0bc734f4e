/**
 * The event types of the stream (contract §6.2), on their own: the browser tests import them too.
 * The names and which are ephemeral are the service's catalog's (functions/model/events.ts),
 * type-only: EventSource needs the names at run time, so they are listed here once more, as the
 * keys of a record the catalog's types check both ways (a name missing, misspelled or extra, or
 * an ephemeral flag that disagrees with the catalog, fails the typecheck).
 */
import type { EphemeralEventType, EventType } from '../../../functions/model/events.js';

const EPHEMERAL: { readonly [T in EventType]: T extends EphemeralEventType ? true : false } = {
  'chat.created': false,
  'chat.updated': false,
  'chat.archived': false,
  'chat.unarchived': false,
  'chat.read': false,
  'chat.unread': false,
  'chat.typing': true,
  'chat.user_typing': true,
  'message.created': false,
  'message.streaming.chunk': true,
  'message.streaming.complete': false,
  'request.created': false,
  'request.resolved': false,
  'request.cancelled': false,
  'media.attached': false,
  'request.reminder': false,
};

/** Every event type, in the contract's order. */
export const EVENT_TYPES = Object.keys(EPHEMERAL) as readonly EventType[];

/** Not replayable, never sent to webhooks (contract §6.1). */
export const EPHEMERAL_EVENT_TYPES: ReadonlySet<string> = new Set(EVENT_TYPES.filter((type) => EPHEMERAL[type]));
