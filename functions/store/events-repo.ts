/**
 * The persisted event log (contract §6). Each event takes a place in an instance-wide
 * sequence: one atomic counter UpdateItem reserves the numbers, and the event items are
 * written in the mutation's own transaction. A failed transaction leaves a hole, which SSE
 * readers treat as "maybe in flight" for a grace period (ARCHITECTURE.md).
 *
 * Event ids are 21 URL-safe characters: the sequence number in 9 base64url digits followed by
 * 12 random ones, so a cursor id leads straight to its item (no pointer item to write).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { customAlphabet } from 'nanoid';
import { UncertainWrite, bookkeeping, ddb, queryAll, tableName } from './db.js';
import type { TransactItem } from './db.js';
import { EPHEMERAL_BUCKET_MS, Keys } from './keys.js';
import { storable } from './storable.js';
import { logger } from '../platform/logger.js';

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

/** Reserves `count` consecutive sequence numbers; returns the first. One UpdateItem (bookkeeping: 429 when DynamoDB does not answer in time). */
export async function reserveSequence(count: number): Promise<number> {
  const out = await bookkeeping(() =>
    ddb().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: Keys.eventSequence,
        UpdateExpression: 'ADD #last :n SET #type = :type',
        ExpressionAttributeNames: { '#last': 'last', '#type': 'type' },
        ExpressionAttributeValues: { ':n': count, ':type': 'sequence' },
        ReturnValues: 'UPDATED_NEW',
      }),
    ),
  );
  return Number(out.Attributes?.last) - count + 1;
}

/**
 * Sequence numbers taken for one mutation's events. The mutation may retry its transaction
 * with the same numbers as often as it needs (the items are rebuilt per attempt, since an
 * event's timestamp or payload may change); if it finally gives up, `abandon()` voids the
 * numbers, so SSE readers learn at once that no event will ever have them instead of waiting
 * out a hole. A process that dies in between leaves a real hole, which readers skip after a
 * grace period.
 */
export class EventReservation {
  private constructor(
    readonly first: number,
    readonly count: number,
  ) {}

  static async take(count: number): Promise<EventReservation> {
    return new EventReservation(count > 0 ? await reserveSequence(count) : 0, count);
  }

  /** The puts of `events` (exactly `count` of them), in order, all stamped `timestamp`. */
  items(events: NewEvent[], timestamp: string): TransactItem[] {
    if (events.length !== this.count)
      throw new Error(`EventReservation holds ${this.count} numbers, got ${events.length} events`);
    const ttl = Math.floor(Date.parse(timestamp) / 1000) + EVENT_RETENTION_SECONDS;
    return events.map((e, i) => ({
      Put: {
        TableName: tableName(),
        Item: {
          ...Keys.event(this.first + i),
          type: 'event',
          seq: this.first + i,
          id: eventIdFor(this.first + i),
          eventType: e.type,
          timestamp,
          // A payload may carry a client's trace or resolution (./storable.ts says why).
          payload: storable(e.payload),
          ttl,
        },
      },
    }));
  }

  /** Marks the numbers as never used (best effort: a failure leaves a hole readers skip later). */
  async abandon(): Promise<void> {
    const ttl = Math.floor(Date.now() / 1000) + EVENT_RETENTION_SECONDS;
    await Promise.all(
      Array.from({ length: this.count }, (_, i) =>
        ddb()
          .send(
            new PutCommand({
              TableName: tableName(),
              Item: { ...Keys.event(this.first + i), type: 'event', seq: this.first + i, void: true, ttl },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          )
          .catch((error: unknown) => {
            if ((error as Error).name !== 'ConditionalCheckFailedException') {
              logger.warn('could not void an unused event number', { seq: this.first + i, error });
            }
          }),
      ),
    );
  }
}

/**
 * Runs a write that appends `events`: reserves their numbers (one call), hands their items
 * to `write` (which may retry its transaction with them), and voids the numbers if `write`
 * finally fails.
 */
export async function withEvents<T>(
  events: NewEvent[],
  timestamp: string,
  write: (eventItems: TransactItem[]) => Promise<T>,
): Promise<T> {
  return withEventNumbers(async (take) => write((await take(events.length)).items(events, timestamp)));
}

/**
 * Runs `write` with event numbers taken on demand: its first `take(count)` reserves them (one
 * call) and later calls return the same reservation, so every retry reuses them and leaves no
 * hole; if `write` finally fails, the numbers it took are voided (unless its commit's outcome is
 * unknown: then they are left as a hole, which readers skip after their grace).
 */
export async function withEventNumbers<T>(
  write: (take: (count: number) => Promise<EventReservation>) => Promise<T>,
): Promise<T> {
  let reservation: EventReservation | undefined;
  try {
    return await write(async (count) => (reservation ??= await EventReservation.take(count)));
  } catch (error) {
    // A commit whose outcome is unknown may still land with them: no void over its events.
    if (!(error instanceof UncertainWrite)) await reservation?.abandon();
    throw error;
  }
}

/** Whether a number holds an event or a void (strongly consistent). */
export async function numberUsed(seq: number): Promise<boolean> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.event(seq), ConsistentRead: true, ProjectionExpression: 'seq' }),
  );
  return out.Item !== undefined;
}

/** Reads one event by sequence number (strongly consistent). */
export async function getEvent(seq: number): Promise<StoredEvent | undefined> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: Keys.event(seq), ConsistentRead: true }));
  const item = out.Item;
  if (!item || item.void) return undefined;
  return toStoredEvent(item);
}

const toStoredEvent = (item: Record<string, unknown>): StoredEvent => ({
  seq: Number(item.seq),
  id: String(item.id),
  type: String(item.eventType),
  timestamp: String(item.timestamp),
  payload: item.payload as Record<string, unknown>,
});

/**
 * The persisted event in a table stream record's new image (the push consumer's input), or
 * undefined for any other item (voided numbers, ephemeral events, everything else).
 */
export function eventFromStreamImage(image: Record<string, AttributeValue> | undefined): StoredEvent | undefined {
  if (!image) return undefined;
  const item = unmarshall(image);
  if (item.type !== 'event' || item.void) return undefined;
  return toStoredEvent(item);
}

/** Ephemeral events live long enough for open streams to fan them out (§6.1), then expire. */
export const EPHEMERAL_TTL_SECONDS = 120;

/**
 * The put of an ephemeral event (typing, chunk): no sequence number, a time-ordered key in a
 * 10-second bucket, a short TTL. Never replayed by cursor (§6.1).
 */
export function ephemeralEventPut(event: NewEvent, timestamp: string): TransactItem {
  // Keyed by the time of this write, not the event's timestamp (which may be the request's
  // start): readers re-read a short overlap window, which must cover only the commit delay.
  const timeMs = Math.max(Date.parse(timestamp), Date.now());
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
        payload: storable(event.payload),
        ttl: Math.floor(timeMs / 1000) + EPHEMERAL_TTL_SECONDS,
      },
    },
  };
}

/** The same put on its own, outside any transaction (a chunk's event: 1 WRU under 1 KB). */
export async function putEphemeralEvent(event: NewEvent, timestamp: string): Promise<void> {
  const { Put } = ephemeralEventPut(event, timestamp);
  await ddb().send(new PutCommand(Put as PutCommandInput));
}

/** The highest sequence number handed out so far (0 before the first event). One GetItem. */
export async function currentSequence(): Promise<number> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.eventSequence, ConsistentRead: true }),
  );
  return Number(out.Item?.last ?? 0);
}

/** A log entry as a reader sees it: an event, or a voided number. */
export type LogEntry = StoredEvent | { seq: number; void: true };

/**
 * Up to `limit` log entries with seq >= `from`, in order, from `from`'s bucket only (a reader
 * moves to the next bucket once it has passed the last number of this one). One Query.
 */
export async function readLog(from: number, limit: number): Promise<LogEntry[]> {
  const { pk, sk } = Keys.event(from);
  const out = await ddb().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: { ':pk': pk, ':from': sk },
      Limit: limit,
      // Eventually consistent (half the price of a poll): a number not yet visible is a gap
      // the reader waits for, and it confirms with a consistent read before skipping one.
    }),
  );
  return (out.Items ?? []).map((item) =>
    item.void ? { seq: Number(item.seq), void: true as const } : toStoredEvent(item),
  );
}

export interface EphemeralEntry {
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, unknown>;
  /** Sort key: time order, ties broken by id. */
  position: string;
}

/** Ephemeral events written at or after `fromMs`, in time order, from the buckets up to `toMs`. */
export async function readEphemeralSince(fromMs: number, toMs: number): Promise<EphemeralEntry[]> {
  const entries: EphemeralEntry[] = [];
  for (let t = fromMs - (fromMs % EPHEMERAL_BUCKET_MS); t <= toMs; t += EPHEMERAL_BUCKET_MS) {
    const { pk } = Keys.ephemeralEvent(t, '');
    const items = await queryAll({
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: { ':pk': pk, ':from': Keys.ephemeralEvent(fromMs, '').sk },
    });
    for (const item of items) {
      entries.push({
        id: String(item.id),
        type: String(item.eventType),
        timestamp: String(item.timestamp),
        payload: item.payload as Record<string, unknown>,
        position: String(item.sk),
      });
    }
  }
  return entries;
}
