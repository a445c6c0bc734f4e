/**
 * The persisted event log (contract §6). Each event takes a place in an instance-wide
 * sequence: one atomic counter UpdateItem reserves the numbers, and the event items are
 * written in the mutation's own transaction. A failed transaction leaves a hole, which SSE
 * readers treat as "maybe in flight" for a grace period (ARCHITECTURE.md).
 *
 * Event ids are 21 URL-safe characters: the sequence number in 9 base64url digits followed by
 * 12 random ones, so a cursor id leads straight to its item (no pointer item to write).
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { customAlphabet } from 'nanoid';
import { ddb, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { Keys } from './keys.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SEQ_DIGITS = 9;
const randomTail = customAlphabet(ALPHABET, 21 - SEQ_DIGITS);
/** Persisted events are kept 30 days (§6.1). */
export const EVENT_RETENTION_SECONDS = 30 * 24 * 3600;

export function eventIdFor(seq: number): string {
  let head = '';
  for (let i = SEQ_DIGITS - 1; i >= 0; i--) head += ALPHABET[Math.floor(seq / 64 ** i) % 64];
  return head + randomTail();
}

/** The sequence number an event id claims, or undefined if it is not one of ours. */
export function sequenceOf(eventId: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{21}$/.test(eventId)) return undefined;
  let seq = 0;
  for (const c of eventId.slice(0, SEQ_DIGITS)) seq = seq * 64 + ALPHABET.indexOf(c);
  return seq;
}

export interface NewEvent {
  type: string;
  payload: Record<string, unknown>;
}

export interface StoredEvent {
  seq: number;
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, unknown>;
}

/** Reserves `count` consecutive sequence numbers; returns the first. One UpdateItem. */
export async function reserveSequence(count: number): Promise<number> {
  const out = await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.eventSequence,
      UpdateExpression: 'ADD #last :n SET #type = :type',
      ExpressionAttributeNames: { '#last': 'last', '#type': 'type' },
      ExpressionAttributeValues: { ':n': count, ':type': 'sequence' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.last) - count + 1;
}

/**
 * The transaction items that append `events` in order, all stamped `timestamp`. Reserves
 * their sequence numbers first (one call), so the caller's transaction stays one call.
 */
export async function eventPuts(events: NewEvent[], timestamp: string): Promise<{ items: TransactItem[]; stored: StoredEvent[] }> {
  if (events.length === 0) return { items: [], stored: [] };
  const first = await reserveSequence(events.length);
  const ttl = Math.floor(Date.parse(timestamp) / 1000) + EVENT_RETENTION_SECONDS;
  const stored = events.map((e, i) => ({ seq: first + i, id: eventIdFor(first + i), type: e.type, timestamp, payload: e.payload }));
  const items = stored.map((e) => ({
    Put: {
      TableName: tableName(),
      Item: { ...Keys.event(e.seq), type: 'event', seq: e.seq, id: e.id, eventType: e.type, timestamp, payload: e.payload, ttl },
    },
  }));
  return { items, stored };
}

/** Reads one event by sequence number (strongly consistent). */
export async function getEvent(seq: number): Promise<StoredEvent | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: Keys.event(seq), ConsistentRead: true }));
  const item = out.Item;
  if (!item) return undefined;
  return { seq: Number(item.seq), id: String(item.id), type: String(item.eventType), timestamp: String(item.timestamp), payload: item.payload };
}

/** Ephemeral events live long enough for open streams to fan them out (§6.1), then expire. */
export const EPHEMERAL_TTL_SECONDS = 120;

/**
 * The put of an ephemeral event (typing, chunk): no sequence number, a time-ordered key in a
 * 10-second bucket, a short TTL. Never replayed by cursor (§6.1).
 */
export function ephemeralEventPut(event: NewEvent, timestamp: string): TransactItem {
  const timeMs = Date.parse(timestamp);
  const id = randomTail() + randomTail().slice(0, SEQ_DIGITS);
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...Keys.ephemeralEvent(timeMs, id),
        type: 'ephemeral-event',
        id,
        eventType: event.type,
        timestamp,
        payload: event.payload,
        ttl: Math.floor(timeMs / 1000) + EPHEMERAL_TTL_SECONDS,
      },
    },
  };
}
