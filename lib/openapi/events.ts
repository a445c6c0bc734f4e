/**
 * The events as OpenAPI components (contract §2.12, §6.2): the catalog's schemas
 * (functions/model/events.ts), one component per type, and `Event`, any of them. Not a route's
 * reply (the event stream answers bytes; its description names `Event`): the document lists them
 * among its components. Build-time only: no function imports this module.
 */
import { z } from 'zod';
import { id, timestamp } from '../../functions/model.js';
import { EVENTS } from '../../functions/model/events.js';

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
