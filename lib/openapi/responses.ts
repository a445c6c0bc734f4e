/**
 * What each handler answers (contract §2 and §5), as zod schemas for the OpenAPI document
 * (document.ts). The resources (Chat, Message, Request, Media) are functions/model.ts's schemas,
 * the ones the store's field lists come from, named here as components; the events are the
 * catalog's (functions/model/events.ts), one component per type. Build-time only: no function
 * imports this module.
 */
import { z } from 'zod';
import * as Model from '../../functions/model.js';
import { EVENTS } from '../../functions/model/events.js';
import { PROVIDER_IDS } from '../../functions/model/rename-providers.js';

const { id, timestamp } = Model;
const freeObject = z.record(z.string(), z.unknown());

// The resources of functions/model.ts, each as a named component (`check` returns a copy).
export const Chat = Model.Chat.check(z.meta({ id: 'Chat', description: 'A chat (contract §2.1).' }));
export const Message = Model.Message.check(z.meta({ id: 'Message', description: 'A message (contract §2.2).' }));
export const Request = Model.Request.check(
  z.meta({ id: 'Request', description: 'An interactive request (contract §2.3).' }),
);
export const Media = Model.Media.check(z.meta({ id: 'Media', description: 'A media record (contract §2.4).' }));

/**
 * An event's envelope (§2.12) per catalog entry, each a component named after its entry
 * (`messageCreated` → `MessageCreatedEvent`), and `Event`, any of them by `type`. The payload's
 * fields are its schema's, closed as the service writes them (a strict object reads the same as
 * a request and as an answer, so each is one component).
 */
const eventEnvelopes = Object.entries(EVENTS).map(([entry, event]) =>
  z.strictObject({ id, type: z.literal(event.type), timestamp, payload: z.strictObject(event.payload.shape) }).meta({
    id: `${entry[0]!.toUpperCase()}${entry.slice(1)}Event`,
    description: event.ephemeral
      ? 'Ephemeral (§6.1): to connected SSE subscribers only; never replayed, never sent to webhooks.'
      : 'Persisted (§6.1): replayable by cursor for 30 days, and sent to the webhooks that list its type (§6.6).',
  }),
);
export const Event = z
  .discriminatedUnion('type', eventEnvelopes as [(typeof eventEnvelopes)[number], ...typeof eventEnvelopes])
  .meta({
    id: 'Event',
    description:
      'An event (contract §2.12, §6.2): the `data:` line of each event on the stream, whose `event:` line is its ' +
      '`type`. A webhook receives the same envelope, its payload enriched for three of the types (§6.6).',
  });

const Cursor = z
  .strictObject({ next: z.string().nullable(), hasMore: z.boolean() })
  .meta({ id: 'Cursor', description: 'Keyset pagination (§1.9): send `next` back as `cursor`.' });
const page = <T extends z.core.$ZodType>(item: T) => z.strictObject({ data: z.array(item), cursor: Cursor });

const DispatchBatch = z
  .strictObject({
    batchId: id,
    chatId: id,
    kind: z.enum(['user_batch', 'request_batch']),
    agentIdHint: z.string().nullable(),
    compiledContent: z.string(),
    items: z.array(
      z.strictObject({
        inputId: id,
        sourceKind: z.enum(['user_message', 'request_resolved']),
        sourceId: id,
        senderId: z.string(),
        content: z.string(),
        traceKind: z.string().optional(),
        mediaIds: z.array(z.string()),
        attachmentNames: z.array(z.string()),
      }),
    ),
    attachments: z.array(
      z.strictObject({
        mediaId: id,
        fileName: z.string(),
        kind: Model.MediaKind,
        sourceInputId: id,
        sourceIndex: z.int().nonnegative(),
      }),
    ),
  })
  .meta({ id: 'DispatchBatch', description: 'A claimed dispatch batch (contract §2.5).' });

const Ok = z.strictObject({ ok: z.literal(true) });

const ConfigResponse = z
  .looseObject({
    appName: z.string(),
    maxUploadBytes: z.int(),
    allowedMimeTypes: z.array(z.string()),
    /** This project's extension: what one upload request carries (larger files go through an upload session). */
    directUploadMaxBytes: z.int().optional(),
    titleMaxChars: z.int(),
    defaultModelIdForNewChats: z.string().optional(),
    agents: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        avatarUrl: z.string().optional(),
        defaultModelId: z.string().optional(),
      }),
    ),
    models: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        metadata: z.record(z.string(), z.string()).optional(),
      }),
    ),
    push: z.strictObject({
      enabled: z.boolean(),
      vapidPublicKey: z.string().nullable(),
      subject: z.string().nullable(),
    }),
    security: z.looseObject({
      instanceSecretEnabled: z.boolean(),
      readEndpointsRequireInstanceSecret: z.boolean(),
      /** This project's extension: the deployment sets the secret, so the API cannot change it. */
      secretSetByDeployment: z.literal(true).optional(),
    }),
    server: z.looseObject({ publicBaseUrl: z.string().nullable(), port: z.int(), dispatch: freeObject }),
    hooks: z.array(
      z.looseObject({
        url: z.string(),
        events: z.array(z.string()),
        timeoutMs: z.int(),
        maxRetries: z.int(),
        /** This project's extension: whether a signing secret and headers are stored, never what. */
        hasSigningSecret: z.boolean().optional(),
        hasHeaders: z.boolean().optional(),
      }),
    ),
    autoRename: z
      .looseObject({ enabled: z.boolean(), provider: z.string(), modelId: z.string(), hasApiKey: z.boolean() })
      .nullable(),
    autoRenameProviders: z.array(
      z.looseObject({
        id: z.enum(PROVIDER_IDS),
        name: z.string(),
        envVar: z.string(),
        hasEnvKey: z.boolean(),
        cheapModels: z.array(z.looseObject({ id: z.string(), label: z.string() })),
      }),
    ),
  })
  .meta({ id: 'Config', description: 'The public configuration, secrets left out (contract §2.11).' });

/** One documented answer: its status, and its JSON body (none for 204), or a binary body, or the error envelope. */
export interface ResponseDoc {
  status: number;
  description: string;
  /** JSON body; absent for 204. */
  body?: z.core.$ZodType;
  /** Raw bytes of this content type instead of JSON (file downloads, the reference page, the event stream). */
  raw?: string;
  /** An error of this handler's own (the envelope, §1.7), beside those document.ts gives every route of its kind. */
  error?: true;
}

const json = (status: number, description: string, body: z.core.$ZodType): ResponseDoc => ({
  status,
  description,
  body,
});
const noContent = (description: string): ResponseDoc => ({ status: 204, description });
const failure = (status: number, description: string): ResponseDoc => ({ status, description, error: true });
const tooLarge = (field: string) =>
  failure(413, `PAYLOAD_TOO_LARGE: \`${field}\` is over the content limit (§2.2: 100,000 bytes).`);
const uploadRefused = [
  failure(413, 'PAYLOAD_TOO_LARGE: the file or the upload body exceeds maxUploadBytes (§5.6.2).'),
  failure(
    415,
    'UNSUPPORTED_MEDIA_TYPE: the type is not allowed (SVG never is), or the bytes do not decode as the image declared (§5.6.2).',
  ),
];
const bytes = (status: number, description: string, contentType = 'application/octet-stream'): ResponseDoc => ({
  status,
  description,
  raw: contentType,
});

/** The success answers of each handler (the errors are added per route by document.ts). */
export const responses: Record<string, ResponseDoc[]> = {
  'health/get': [
    json(
      200,
      'The service is up (§2.10).',
      z.strictObject({ service: z.literal('opengram'), status: z.literal('ok'), version: z.string(), uptime: z.int() }),
    ),
  ],
  'config/get': [json(200, 'The public configuration.', ConfigResponse)],
  'config/admin': [json(200, 'The configuration was changed (§5.2.2).', Ok)],
  'config/validate-auto-rename': [json(200, 'The provider accepted the model (§5.2.3).', Ok)],
  'chats/create': [json(201, 'The new chat.', Chat), tooLarge('firstMessage')],
  'chats/list': [json(200, 'A page of chats (§5.3.2).', page(Chat))],
  'chats/pending-summary': [
    json(200, 'Pending requests over all chats (§2.9).', z.strictObject({ pending_requests_total: z.int() })),
  ],
  'chats/unread-summary': [
    json(
      200,
      'Unread messages over all chats (§2.9).',
      z.strictObject({ total_unread: z.int(), unread_by_agent: z.record(z.string(), z.int()) }),
    ),
  ],
  'chats/get': [json(200, 'The chat.', Chat)],
  'chats/update': [json(200, 'The updated chat.', Chat)],
  'chats/archive': [json(200, 'Archived.', Ok)],
  'chats/unarchive': [json(200, 'Unarchived.', Ok)],
  'chats/mark-read': [json(200, 'Marked read.', Ok)],
  'chats/mark-unread': [json(200, 'Marked unread.', Ok)],
  'chats/typing': [noContent('The typing event was emitted.')],
  'chats/user-typing': [noContent('The typing event was emitted.')],
  'messages/create': [json(201, 'The new message.', Message), tooLarge('content')],
  'messages/list': [json(200, 'A page of messages, newest first (§5.4.2).', page(Message))],
  'messages/cancel-streaming': [
    json(200, 'The messages that were cancelled.', z.strictObject({ cancelledMessageIds: z.array(id) })),
  ],
  'messages/chunk': [json(200, 'The streaming message with the chunk appended.', Message), tooLarge('deltaText')],
  'messages/complete': [json(200, 'The completed message.', Message), tooLarge('finalText')],
  'messages/cancel': [json(200, 'The cancelled message.', Message)],
  'requests/create': [json(201, 'The new request.', Request)],
  'requests/list': [json(200, "The chat's requests, oldest first.", z.strictObject({ data: z.array(Request) }))],
  'requests/update': [json(200, 'The updated request.', Request)],
  'requests/resolve': [json(200, 'The resolved request.', Request)],
  'requests/cancel': [json(200, 'The cancelled request.', Request)],
  'dispatch/claim': [json(200, 'A claimed batch.', DispatchBatch), noContent('Nothing was claimable within waitMs.')],
  'dispatch/claim-many': [
    json(200, 'The claimed batches.', z.strictObject({ batches: z.array(DispatchBatch) })),
    noContent('Nothing was claimable within waitMs.'),
  ],
  'dispatch/heartbeat': [noContent('The lease was extended.')],
  'dispatch/complete': [noContent('The batch is completed.')],
  'dispatch/fail': [noContent('The failure was recorded.')],
  'media/upload': [json(201, 'The stored media.', Media), ...uploadRefused],
  'media/list': [json(200, "A page of the chat's media, newest first.", page(Media))],
  'media/upload-session': [
    json(
      201,
      'A presigned POST for the file (docs/architecture.md "Large files").',
      z.strictObject({
        uploadId: id,
        url: z.string(),
        fields: z.record(z.string(), z.string()),
        expiresAt: timestamp,
        maxUploadBytes: z.int(),
      }),
    ),
    ...uploadRefused,
  ],
  'media/finalize': [json(201, 'The stored media.', Media), ...uploadRefused],
  'media/get': [json(200, 'The media record.', Media)],
  'media/delete': [
    json(200, 'The media record as it was before deletion.', Media),
    failure(409, 'CONFLICT: the media is attached to a message.'),
  ],
  'files/get': [bytes(200, 'The original bytes.'), bytes(206, 'The requested byte range.')],
  'files/thumbnail': [bytes(200, 'The WebP thumbnail.', 'image/webp')],
  'tags/suggestions': [
    json(
      200,
      'Tag suggestions, most used first.',
      z.strictObject({ data: z.array(z.strictObject({ name: z.string(), usage_count: z.int() })) }),
    ),
  ],
  'search/get': [
    json(
      200,
      'Chat and message hits (§2.8).',
      z.strictObject({
        chats: z.array(z.strictObject({ id, title: z.string(), snippet: z.string(), agent_ids: z.array(z.string()) })),
        messages: z.array(
          z.strictObject({
            id,
            chat_id: id,
            chat_title: z.string(),
            snippet: z.string(),
            agent_ids: z.array(z.string()),
          }),
        ),
        cursor: Cursor,
      }),
    ),
  ],
  'push/subscribe': [json(201, 'The stored subscription.', z.strictObject({ id, endpoint: z.string() }))],
  'push/unsubscribe': [
    json(200, 'Whether one was removed.', z.strictObject({ ok: z.literal(true), removed: z.boolean() })),
  ],
  'push/test': [
    json(
      200,
      'Delivery counts.',
      z.strictObject({ ok: z.literal(true), sent: z.int(), failed: z.int(), removed: z.int() }),
    ),
  ],
  'events/stream': [
    bytes(
      200,
      'Server-sent events (§6.4), unbuffered: `: stream opened`, then each event as `event: <type>`, ' +
        '`data: <its envelope {id, type, timestamp, payload} as one line of JSON: an Event>` and `id: <event id>`, ' +
        'a `: keepalive` comment every 15 s. The service ends a stream after at most 14 minutes with an `id:` ' +
        'to resume from (`cursor` or `Last-Event-ID`) and `retry:`. Errors come before the stream, as JSON.',
      'text/event-stream',
    ),
  ],
  'auth/sign-in': [
    noContent(
      'Signed in: Set-Cookie carries the session (HttpOnly, SameSite=Strict, Path=/api, 30 days, renewed while in ' +
        'use; §1.11.1). With the secret off, no cookie. A body without `secret` only probes: 204 when the ' +
        'request carries a valid session (the cookie is HttpOnly, so a page cannot tell), else 401, not counted ' +
        'as a failed attempt.',
    ),
    failure(401, 'UNAUTHORIZED: the secret is wrong, or a probe without `secret` carries no valid session.'),
  ],
  'auth/sign-out': [noContent("This browser's session cookie is cleared (Set-Cookie with Max-Age=0).")],
  'auth/sign-out-everywhere': [
    noContent('Every session signed so far is refused from now on; this cookie is cleared.'),
  ],
  'doc/get': [json(200, 'This OpenAPI 3.1 document.', freeObject)],
  'doc/reference': [bytes(200, 'An HTML reference page of this document.', 'text/html')],
};
