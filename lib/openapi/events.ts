/**
 * The events as OpenAPI components (contract §2.12, §6.2): the catalog's schemas
 * (functions/model/events.ts), one component per type, and `Event`, any of them. Not a route's
 * reply (the event stream answers bytes; its description names `Event`): the document lists them
 * among its components. And the outbound webhooks (§6.6), one per persisted type, as the
 * document's `webhooks`. Build-time only: no function imports this module.
 */
import { z } from 'zod';
import { id, timestamp } from '../../functions/model.js';
import { EVENTS, HOOK_PAYLOADS } from '../../functions/model/events.js';
import type { ZodOpenApiPathsObject } from 'zod-openapi';

/** `messageCreated` → `MessageCreated`. */
const capitalized = (entry: string) => `${entry[0]!.toUpperCase()}${entry.slice(1)}`;

/**
 * An event's envelope (§2.12) per catalog entry, each a component named after its entry
 * (`messageCreated` → `MessageCreatedEvent`), and `Event`, any of them by `type`. The payload's
 * fields are its schema's, closed as the service writes them (a strict object reads the same as
 * a request and as an answer, so each is one component).
 */
const eventEnvelopes = Object.entries(EVENTS).map(([entry, event]) =>
  z.strictObject({ id, type: z.literal(event.type), timestamp, payload: z.strictObject(event.payload.shape) }).meta({
    id: `${capitalized(entry)}Event`,
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

const signature = z
  .string()
  .regex(/^sha256=[0-9a-f]{64}$/)
  .meta({
    description:
      "`sha256=<lower-case hex HMAC-SHA256 of the exact raw body, keyed by the hook's signingSecret>`; sent only " +
      'when the hook has one.',
  });

/**
 * The outbound webhooks (contract §6.6) as the document's `webhooks` (OpenAPI 3.1): one per
 * persisted event type, named by it, describing the POST a hook that lists the type receives. The
 * body is the event's envelope; its payload is the catalog's, or, for the types §6.6 enriches
 * (HOOK_PAYLOADS), the enriched one (the catalog's when the record is gone). The answers say what
 * the service does with each.
 */
export function eventWebhooks(): ZodOpenApiPathsObject {
  const webhooks: ZodOpenApiPathsObject = {};
  for (const [entry, event] of Object.entries(EVENTS)) {
    if (event.ephemeral) continue;
    const raw = z.strictObject(event.payload.shape);
    const enriched = entry in HOOK_PAYLOADS ? HOOK_PAYLOADS[entry as keyof typeof HOOK_PAYLOADS] : undefined;
    const payload = enriched
      ? z.union([
          z.strictObject(enriched.shape).meta({
            id: `${capitalized(entry)}WebhookPayload`,
            description: 'Enriched from the current records (§6.6).',
          }),
          raw.meta({ description: "The event's own payload: sent when the record is gone." }),
        ])
      : raw;
    webhooks[event.type] = {
      post: {
        operationId: `webhook${capitalized(entry)}`,
        summary: `${event.type}, to each hook that lists it`,
        description:
          'Sent off the request path after the event is written (a delivery never holds up or fails the request). ' +
          "Headers: `Content-Type: application/json`, the hook's own `headers`, and `X-OpenGram-Signature` when the " +
          'hook has a `signingSecret`. Up to `1 + maxRetries` attempts of `timeoutMs` each; a redelivered event ' +
          'is not sent to a hook twice.',
        requestParams: { header: z.object({ 'X-OpenGram-Signature': signature.optional() }) },
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: z.strictObject({ id, type: z.literal(event.type), timestamp, payload }),
            },
          },
        },
        responses: {
          '2XX': { description: 'Delivered: no further attempt.' },
          '4XX': { description: 'A permanent failure: not retried.' },
          '5XX': {
            description:
              'Retried, as a network error or a timeout is, after min(1000 × 2^(k−1) + random(0..500), 30000) ms ' +
              'before retry k.',
          },
        },
      },
    };
  }
  return webhooks;
}
