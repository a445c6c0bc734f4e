/**
 * The event catalog (contract §6.2), declared once: each event type's name, whether it is
 * ephemeral (§6.1), and a zod schema of its payload, exactly as the service writes it (camelCase
 * fields, plus the snake_case `resolution_payload` the reference sends). No other file under
 * functions/ spells an event type's name (test/unit/event-catalog.test.ts greps for one):
 *
 * - writers build their events through the catalog, `EVENTS.chatUpdated.of({ chatId })`, so a
 *   misspelled entry or a payload field missing or of the wrong type fails the typecheck
 *   (`NewEvent` is the union of what `of` builds; `of` adds no parse: the typecheck is the check,
 *   and the payload object is stored as given, so the wire keeps its bytes);
 * - readers ask `isEvent(event, EVENTS.messageCreated)`, which checks the name and parses the
 *   payload with the schema, and narrow the stored event's payload to the schema's type;
 * - the OpenAPI document describes every event from these schemas (lib/openapi/events.ts);
 * - the web app takes the types, type-only (web/src/live/event-types.ts).
 *
 * Why handles rather than a list of names: the name, the ephemerality and the payload travel
 * together, so a reader that names an event also gets its payload type, and a name is written
 * once (a literal checked by a type would still be the name spelled again).
 */
import { MediaKind, MessageRole, RequestType, USER_SENDER_ID, id, timestamp } from '../model.js';
import * as z from '../platform/zod.js';

const freeObject = z.record(z.string(), z.unknown());

/** One catalog entry: a persisted or ephemeral event type and its payload. */
export interface EventDef<T extends string = string, S extends z.ZodMiniObject = z.ZodMiniObject> {
  readonly type: T;
  /** Ephemeral events (§6.1) reach live SSE subscribers only: never replayed, never sent to webhooks. */
  readonly ephemeral: boolean;
  readonly payload: S;
  /** The event a writer appends: this type and `payload`, typed by the schema (not parsed). */
  of(payload: z.infer<S>): { type: T; payload: z.infer<S> };
}

function define<T extends string, E extends boolean, S extends z.ZodMiniObject>(
  type: T,
  ephemeral: E,
  payload: S,
): EventDef<T, S> & { readonly ephemeral: E } {
  return Object.freeze({ type, ephemeral, payload, of: (p: z.infer<S>) => ({ type, payload: p }) });
}
const persisted = <T extends string, S extends z.ZodMiniObject>(type: T, payload: S) => define(type, false, payload);
const ephemeral = <T extends string, S extends z.ZodMiniObject>(type: T, payload: S) => define(type, true, payload);

const chatOnly = () => z.object({ chatId: id });
/** `reason` on a request closed by its deadline (§5.5.6); absent otherwise. */
const closedByDeadline = z.optional(z.literal('deadline'));

/** Every event type of §6.2, in the contract's order. */
export const EVENTS = {
  chatCreated: persisted('chat.created', chatOnly()),
  chatUpdated: persisted('chat.updated', chatOnly()),
  chatArchived: persisted('chat.archived', chatOnly()),
  chatUnarchived: persisted('chat.unarchived', chatOnly()),
  chatRead: persisted('chat.read', chatOnly()),
  chatUnread: persisted('chat.unread', chatOnly()),
  chatTyping: ephemeral('chat.typing', z.object({ chatId: id, agentId: z.string() })),
  chatUserTyping: ephemeral('chat.user_typing', z.object({ chatId: id, senderId: z.literal(USER_SENDER_ID) })),
  messageCreated: persisted(
    'message.created',
    z.object({
      chatId: id,
      messageId: id,
      role: MessageRole,
      senderId: z.string(),
      streamState: z.enum(['complete', 'streaming']),
      contentFinal: z.nullable(z.string()),
      createdAt: timestamp,
      // Absent only for a chat's first message (created with the chat, §5.3.1).
      trace: z.optional(z.nullable(freeObject)),
    }),
  ),
  messageStreamingChunk: ephemeral(
    'message.streaming.chunk',
    z.object({ chatId: id, messageId: id, deltaText: z.string() }),
  ),
  messageStreamingComplete: persisted(
    'message.streaming.complete',
    z.object({
      chatId: id,
      messageId: id,
      role: MessageRole,
      streamState: z.enum(['complete', 'cancelled']),
      // The final text when complete, null when cancelled.
      finalText: z.nullable(z.string()),
    }),
  ),
  requestCreated: persisted(
    'request.created',
    z.object({ chatId: id, requestId: id, type: RequestType, title: z.string() }),
  ),
  requestResolved: persisted(
    'request.resolved',
    z.object({
      chatId: id,
      requestId: id,
      type: RequestType,
      title: z.string(),
      status: z.literal('resolved'),
      // The request's resolved_by.
      senderId: z.enum(['user', 'backend']),
      resolution_payload: freeObject,
      resolutionPayload: freeObject,
      trace: z.nullable(freeObject),
      reason: closedByDeadline,
    }),
  ),
  requestCancelled: persisted(
    'request.cancelled',
    z.object({
      chatId: id,
      requestId: id,
      type: RequestType,
      status: z.literal('cancelled'),
      resolution_payload: z.null(),
      trace: z.nullable(freeObject),
      reason: closedByDeadline,
    }),
  ),
  mediaAttached: persisted(
    'media.attached',
    z.object({ chatId: id, mediaId: id, messageId: z.nullable(id), kind: MediaKind }),
  ),
  /** This project's extension (§5.5.6): a deadline's reminder falls due. */
  requestReminder: persisted(
    'request.reminder',
    z.object({
      chatId: id,
      requestId: id,
      type: RequestType,
      title: z.string(),
      deadlineAt: timestamp,
      secondsLeft: z.int(),
    }),
  ),
};

/** A closed request as a webhook receives it (§6.6): read from the current record. */
const closedRequestHook = <S extends 'resolved' | 'cancelled'>(status: S) =>
  z.object({
    chatId: id,
    requestId: id,
    type: RequestType,
    status: z.literal(status),
    resolutionPayload: z.nullable(freeObject),
    trace: z.nullable(freeObject),
    reason: closedByDeadline,
  });

/**
 * The payloads a webhook receives where §6.6 enriches them from the current records, by catalog
 * entry: message.created from the message and its chat, request.resolved and request.cancelled
 * from the request. A record that is gone sends the event's own payload instead; every other type
 * sends its own payload. core/webhooks.ts builds them typed by these schemas, and the OpenAPI
 * document's `webhooks` describe them (lib/openapi/events.ts).
 */
export const HOOK_PAYLOADS = {
  messageCreated: z.object({
    chatId: id,
    agentIds: z.array(z.string()),
    messageId: id,
    senderId: z.string(),
    role: MessageRole,
    // The message's content_final, or else its content_partial.
    content: z.nullable(z.string()),
    modelId: z.nullable(z.string()),
    pendingRequestsCount: z.int(),
    trace: z.nullable(freeObject),
  }),
  requestResolved: closedRequestHook('resolved'),
  requestCancelled: closedRequestHook('cancelled'),
} satisfies Partial<Record<keyof typeof EVENTS, z.ZodMiniObject>>;
/** The enriched payload of an entry of HOOK_PAYLOADS. */
export type HookPayloadOf<K extends keyof typeof HOOK_PAYLOADS> = z.infer<(typeof HOOK_PAYLOADS)[K]>;

type Catalog = typeof EVENTS;
/** Any entry of the catalog. */
export type CatalogEvent = Catalog[keyof Catalog];
/** The event type names (§6.2). */
export type EventType = CatalogEvent['type'];
export type EphemeralEventType = Extract<CatalogEvent, { ephemeral: true }>['type'];
export type PersistedEventType = Exclude<EventType, EphemeralEventType>;

/** An event of these entries, its payload typed by their schemas (a discriminated union on `type`). */
export type EventOf<D extends EventDef> =
  D extends EventDef<infer T, infer S> ? { type: T; payload: z.infer<S> } : never;
/** The payload of an entry, `PayloadOf<typeof EVENTS.messageCreated>`. */
export type PayloadOf<D extends EventDef> = z.infer<D['payload']>;

/** An event a writer appends: `{ type: <a catalog name>, payload: <its schema's type> } | …`. */
export type NewEvent = EventOf<CatalogEvent>;
/** What goes into the log (EventReservation, withEvents). */
export type NewPersistedEvent = Extract<NewEvent, { type: PersistedEventType }>;
/** What goes to open streams only (ephemeralEventPut). */
export type NewEphemeralEvent = Extract<NewEvent, { type: EphemeralEventType }>;
/** An event as the stream delivers it (§2.12): its id and time, its payload typed by its type. */
export type EventEnvelope = NewEvent & { id: string; timestamp: string };

/** The catalog's entries, in §6.2's order. */
export const EVENT_DEFS: readonly CatalogEvent[] = Object.values(EVENTS);
/** The event type names, in §6.2's order. */
export const EVENT_TYPES: readonly EventType[] = EVENT_DEFS.map((d) => d.type);
/** The ephemeral ones (§6.1). */
export const EPHEMERAL_EVENT_TYPES: readonly EphemeralEventType[] = EVENT_DEFS.filter(
  (d): d is Extract<CatalogEvent, { ephemeral: true }> => d.ephemeral,
).map((d) => d.type);

/** The catalog's entry for a type name, or undefined for a name it does not list. */
export const eventDefOf = (type: string): CatalogEvent | undefined => EVENT_DEFS.find((d) => d.type === type);

/**
 * True when `event` is one of `defs` and its payload parses with that entry's schema: the
 * event's payload then reads as the schema's type. An event of another type, or one whose payload
 * does not match (nothing the typed writers write), is not one of them.
 */
export function isEvent<E extends { type: string; payload: unknown }, const Ds extends readonly EventDef[]>(
  event: E,
  ...defs: Ds
): event is E & EventOf<Ds[number]> {
  return defs.some((d) => d.type === event.type && d.payload.safeParse(event.payload).success);
}
