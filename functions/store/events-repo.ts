/**
 * The persisted event log (contract §6). Each event takes a place in an instance-wide
 * sequence: one atomic counter UpdateItem reserves the numbers, and the event items are
 * written in the mutation's own transaction. A failed transaction leaves a hole, which SSE
 * readers treat as "maybe in flight" for a grace period (ARCHITECTURE.md).
 *
 * A number holds at most one thing, ever: an event, or a void saying no event will have it. Both
 * are conditional puts (attribute_not_exists), so whichever lands first wins. A writer voids the
 * numbers of a mutation it gave up on; the first reader that has waited out a hole's grace voids
 * that number (voidNumber), so the decision is made once and every later reader, replaying
 * across it, passes it at once. A writer whose transaction comes after such a void fails on its
 * event's condition (nothing of it is written: EventNumberTaken) and runs again with new numbers
 * (withEventNumbers): its event is late, never lost, never twice.
 *
 * Event ids are 21 URL-safe characters: the sequence number in 9 base64url digits followed by
 * 12 random ones, so a cursor id leads straight to its item (no pointer item to write).
 */
import { QueryCommand as LowLevelQuery } from '@aws-sdk/client-dynamodb';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { customAlphabet } from 'nanoid';
import { UncertainWrite, bookkeeping, ddb, guarded, putIfAbsent, putNew, queryAll, tableName } from './db.js';
import type { GuardedItem, TransactItem } from './db.js';
import { BusyError } from '../errors.js';
import { EPHEMERAL_BUCKET_MS, Keys } from './keys.js';
import { storable } from './storable.js';
import { logger } from '../platform/logger.js';
import { retry } from '../platform/retry.js';
import type { RetryPolicy } from '../platform/retry.js';
import type { NewEphemeralEvent, NewPersistedEvent } from '../model/events.js';

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

/**
 * An event as read back from the log: its type and payload are what the table holds, read by
 * name and schema through the catalog (model/events.ts isEvent), never trusted as typed.
 */
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
 * A mutation's event number was voided before its transaction came (a reader waited it out as a
 * hole): the transaction wrote nothing, and withEventNumbers runs the mutation again.
 */
export class EventNumberTaken extends Error {
  constructor(readonly seq: number) {
    super(`event number ${seq} was voided before its transaction committed`);
  }
}

/**
 * Sequence numbers taken for one mutation's events. The mutation may retry its transaction
 * with the same numbers as often as it needs (the items are rebuilt per attempt, since an
 * event's timestamp or payload may change); if it finally gives up, `abandon()` voids the
 * numbers, so SSE readers learn at once that no event will ever have them instead of waiting
 * out a hole. A process that dies in between leaves a real hole, which the first reader to wait
 * it out voids.
 */
export class EventReservation {
  private constructor(
    readonly first: number,
    readonly count: number,
  ) {}

  static async take(count: number): Promise<EventReservation> {
    return new EventReservation(count > 0 ? await reserveSequence(count) : 0, count);
  }

  /**
   * The puts of `events` (exactly `count` of them), in order, all stamped `timestamp`. Each is
   * conditioned on its number being free (no extra capacity in a transaction): a number voided
   * meanwhile fails the transaction with EventNumberTaken.
   */
  items(events: NewPersistedEvent[], timestamp: string): GuardedItem[] {
    if (events.length !== this.count)
      throw new Error(`EventReservation holds ${this.count} numbers, got ${events.length} events`);
    const ttl = Math.floor(Date.parse(timestamp) / 1000) + EVENT_RETENTION_SECONDS;
    return events.map((e, i) =>
      guarded(
        putNew({
          ...Keys.event(this.first + i),
          type: 'event',
          seq: this.first + i,
          id: eventIdFor(this.first + i),
          eventType: e.type,
          timestamp,
          // A payload may carry a client's trace or resolution (./storable.ts says why).
          payload: storable(e.payload),
          ttl,
        }),
        () => new EventNumberTaken(this.first + i),
      ),
    );
  }

  /** Marks the numbers as never used (best effort: a failure leaves a hole readers skip later). */
  async abandon(): Promise<void> {
    await Promise.all(
      Array.from({ length: this.count }, (_, i) =>
        voidNumber(this.first + i).catch((error: unknown) => {
          logger.warn('could not void an unused event number', { seq: this.first + i, error });
        }),
      ),
    );
  }
}

/**
 * Voids `seq` unless it is used: one conditional PutItem (1 WRU). True when this call voided it,
 * false when it already holds an event or a void (a reader then reads it on its next poll).
 * Made by a writer for the numbers it gives up, and by a reader for a hole it has waited out.
 */
export async function voidNumber(seq: number): Promise<boolean> {
  const item: Record<(typeof Keys.voidAttributes)[number], unknown> = {
    ...Keys.event(seq),
    type: 'event',
    seq,
    void: true,
    ttl: Math.floor(Date.now() / 1000) + EVENT_RETENTION_SECONDS,
  };
  return (await putIfAbsent({ Item: item })).ok;
}

/**
 * A mutation whose event number a reader voided first (EventNumberTaken: nothing was written)
 * runs again at once with new numbers, 3 runs in all: more in a row means the table is too slow
 * to take writes within the readers' grace, and the client is told 429 to come back later.
 */
const NUMBER_TAKEN: RetryPolicy = {
  attempts: 3,
  backoff: () => 0,
  retryable: (error) => error instanceof EventNumberTaken,
  exhausted: () => new BusyError(),
};

/**
 * Runs a write that appends `events`: reserves their numbers (one call), hands their items
 * to `write` (which may retry its transaction with them), and voids the numbers if `write`
 * finally fails.
 */
export async function withEvents<T>(
  events: NewPersistedEvent[],
  timestamp: string,
  write: (eventItems: GuardedItem[]) => Promise<T>,
): Promise<T> {
  return withEventNumbers(async (take) => write((await take(events.length)).items(events, timestamp)));
}

/**
 * Runs `write` with event numbers taken on demand: its first `take(count)` reserves them (one
 * call) and later calls return the same reservation, so every retry reuses them and leaves no
 * hole; if `write` finally fails, the numbers it took are voided, unless its commit's outcome is
 * unknown (UncertainWrite: no call waited for past the deadline); then a reader voids them after its
 * grace, and the commit, if it comes later, fails on its event puts' condition. If its transaction
 * failed because a reader had voided one of its numbers (EventNumberTaken: nothing was written), it
 * runs again from the start with new numbers (NUMBER_TAKEN); after 3 such runs, 429.
 */
export async function withEventNumbers<T>(
  write: (take: (count: number) => Promise<EventReservation>) => Promise<T>,
): Promise<T> {
  return retry(NUMBER_TAKEN, async () => {
    let reservation: EventReservation | undefined;
    try {
      return await write(async (count) => (reservation ??= await EventReservation.take(count)));
    } catch (error) {
      if (!(error instanceof UncertainWrite)) await reservation?.abandon();
      if (error instanceof EventNumberTaken) {
        logger.warn('an event number was voided before its transaction; writing again', { seq: error.seq });
      }
      throw error;
    }
  });
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
 * An ephemeral event is keyed by the time its write starts, and readers re-read a short window
 * back from where they were on every poll (core/event-stream.ts, ephemeralOverlapMs: 3 s). A
 * write that lands later than that after its key time (a table slow to take writes, an SDK retry
 * after a timed-out attempt, a paused function) lands behind every reader. So a write that lands
 * more than EPHEMERAL_LAND_MS after its key time is written again under the time now, with the
 * same event id, until a copy lands in time (landEphemeral); readers send an id once. The rest of
 * the readers' window is for eventually consistent reads and for clocks that differ.
 */
export const EPHEMERAL_LAND_MS = 1500;
/**
 * Copies of one ephemeral event are keyed within this long of its first key time (a write later
 * than that is given up, logged): a reader keeps the ids it sent until then, so none is sent twice.
 */
export const EPHEMERAL_COPIES_WITHIN_MS = 30_000;

/**
 * The put of an ephemeral event (typing, chunk): no sequence number, a time-ordered key in a
 * one-minute bucket (Keys.ephemeralEvent), a short TTL. Never replayed by cursor (§6.1). Once written, hand it to
 * landEphemeral.
 */
export function ephemeralEventPut(event: NewEphemeralEvent, timestamp: string): TransactItem {
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

/**
 * After `put` (an ephemeralEventPut) was written, alone or in a transaction: while the last copy
 * landed more than EPHEMERAL_LAND_MS after its key time, writes a copy keyed now (1 WRU each; a
 * write that lands in time, nearly all of them, costs nothing more). Never throws: the event is
 * best effort (§6.1) and its request has done its work; a failure is logged.
 */
export async function landEphemeral(put: TransactItem): Promise<void> {
  const item = put.Put!.Item as Record<string, unknown>;
  const id = String(item.id);
  const firstMs = Keys.ephemeralEventTime(String(item.sk));
  let keyMs = firstMs;
  while (Date.now() - keyMs > EPHEMERAL_LAND_MS) {
    keyMs = Date.now();
    if (keyMs - firstMs > EPHEMERAL_COPIES_WITHIN_MS) {
      logger.warn('ephemeral event landed too late to copy; open streams may miss it', { id, lateMs: keyMs - firstMs });
      return;
    }
    const copy = { ...item, ...Keys.ephemeralEvent(keyMs, id), ttl: Math.floor(keyMs / 1000) + EPHEMERAL_TTL_SECONDS };
    try {
      await ddb().send(new PutCommand({ TableName: tableName(), Item: copy }));
    } catch (error) {
      logger.warn('could not copy a late ephemeral event; open streams may miss it', { id, error });
      return;
    }
  }
}

/** The same put on its own, outside any transaction (a chunk's event: 1 WRU under 1 KB), landed. */
export async function putEphemeralEvent(event: NewEphemeralEvent, timestamp: string): Promise<void> {
  const put = ephemeralEventPut(event, timestamp);
  await ddb().send(new PutCommand(put.Put as PutCommandInput));
  await landEphemeral(put);
}

/** The highest sequence number handed out so far (0 before the first event). One GetItem. */
export async function currentSequence(): Promise<number> {
  return (await sequenceHead()).last;
}

/**
 * The counter item: `last`, the highest number handed out, and `settled`, the highest number
 * known to have been handed out by a process that is gone (0 if none is known): a number up to it
 * that holds no event will never get one, so a reader voids it at once instead of waiting out a
 * grace (settleHandedOut). One GetItem.
 */
export async function sequenceHead(): Promise<{ last: number; settled: number }> {
  const out = await ddb().send(
    new GetCommand({ TableName: tableName(), Key: Keys.eventSequence, ConsistentRead: true }),
  );
  return { last: Number(out.Item?.last ?? 0), settled: Number(out.Item?.settled ?? 0) };
}

/**
 * Records that every number handed out so far was handed out by processes that are gone: the
 * local runtime calls it at start, holding its data folder's lock (local/data-lock.ts), so no other
 * writer of this table is alive. One UpdateItem (1 WRU).
 */
export async function settleHandedOut(): Promise<number> {
  const out = await ddb().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: Keys.eventSequence,
      UpdateExpression: 'SET #settled = if_not_exists(#last, :zero), #type = :type',
      ExpressionAttributeNames: { '#settled': 'settled', '#last': 'last', '#type': 'type' },
      ExpressionAttributeValues: { ':zero': 0, ':type': 'sequence' },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return Number(out.Attributes?.settled ?? 0);
}

/**
 * A log entry as a reader sees it: an event with its item as stored (DynamoDB JSON, as a stream
 * record's NewImage carries it: the local runtime's stream consumers get it so), or a voided number.
 */
export type LogEntry = LoggedEvent | { seq: number; void: true };
export interface LoggedEvent extends StoredEvent {
  image: Record<string, AttributeValue>;
}

/**
 * Up to `limit` log entries from `from`'s bucket only, from `from` on in order (`forward`), or up
 * to it newest first. One Query, eventually consistent (half the price of a poll): a number not yet
 * visible is a gap the reader waits for, and it confirms with a consistent read before skipping
 * one. The low-level Query, so the items come as stored (the document client shares its base
 * client's stack and sends a low-level command as it is); unmarshalled as the document client does.
 */
async function queryLog(from: number, limit: number, forward: boolean): Promise<LogEntry[]> {
  const { pk, sk } = Keys.event(from);
  const out = await (ddb() as unknown as DynamoDBClient).send(
    new LowLevelQuery({
      TableName: tableName(),
      KeyConditionExpression: `pk = :pk AND sk ${forward ? '>=' : '<='} :sk`,
      ExpressionAttributeValues: { ':pk': { S: pk }, ':sk': { S: sk } },
      ScanIndexForward: forward,
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((image) => {
    const item = unmarshall(image);
    return item.void ? { seq: Number(item.seq), void: true as const } : { ...toStoredEvent(item), image };
  });
}

/**
 * Up to `limit` log entries with seq >= `from`, in order, from `from`'s bucket only (a reader moves
 * to the next bucket once it has passed the last number of this one).
 */
export const readLog = (from: number, limit: number): Promise<LogEntry[]> => queryLog(from, limit, true);

/** Up to `limit` log entries with seq <= `through`, newest first, from `through`'s bucket only. */
export const readLogBack = (through: number, limit: number): Promise<LogEntry[]> => queryLog(through, limit, false);

export interface EphemeralEntry {
  id: string;
  type: string;
  timestamp: string;
  payload: Record<string, unknown>;
  /** Sort key: time order, ties broken by id. */
  position: string;
  /** The time in the key (a late write's copy has a later one, same id: landEphemeral). */
  atMs: number;
}

/**
 * Ephemeral events written at or after `fromMs`, from the buckets up to `toMs`, newest bucket
 * first: an event that a later bucket shows was written before it was read, so the earlier
 * buckets, read after, show every event written before it (a stream's chunks stay in order
 * across a bucket's end).
 */
export async function readEphemeralSince(fromMs: number, toMs: number): Promise<EphemeralEntry[]> {
  const entries: EphemeralEntry[] = [];
  const first = fromMs - (fromMs % EPHEMERAL_BUCKET_MS);
  for (let t = toMs - (toMs % EPHEMERAL_BUCKET_MS); t >= first; t -= EPHEMERAL_BUCKET_MS) {
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
        atMs: Keys.ephemeralEventTime(String(item.sk)),
      });
    }
  }
  return entries;
}
