/**
 * The live event stream (contract §6.4), independent of how bytes reach the client: the
 * Lambda response-streaming handler (functions/http/events/stream.ts) and the local adapter both
 * drive `runStream` with a sink.
 *
 * Delivery reads the event log, so it works across any number of function instances:
 * - Persisted events are read in sequence order through the log's one reader (core/log-reader.ts,
 *   shared with the local runtime's tails), which never passes a missing number until it is
 *   voided, and voids one that stays missing for `holeGraceMs` itself: nothing is skipped, and
 *   nothing is sent twice.
 * - Ephemeral events (typing, chunks) are read from their time buckets, re-reading a short
 *   overlap window on every poll (writers' clocks and commit delays differ) and dropping the
 *   ones already sent, by id. A write that lands later than the window allows is copied under a
 *   later key by its writer (events-repo.ts landEphemeral), so none is passed for good.
 * - A poll that fails is tried again (the positions move only past what was sent); only polls
 *   failing for POLL_FAILURES_RELEASE_MS end the stream.
 * - Polls are fast while events flow, stay at 200 ms for 6 s after the last event, and back off to
 *   once a second when idle; a write made in the same process (the local runtime) wakes a
 *   waiting stream at once (platform/write-bell.ts).
 */
import { createHash } from 'node:crypto';
import { FieldRuleError } from '../errors.js';
import {
  currentSequence,
  eventIdFor,
  getEvent,
  readEphemeralSince,
  readLogBack,
  sequenceOf,
} from '../store/events-repo.js';
import type { EphemeralEntry } from '../store/events-repo.js';
import { EPHEMERAL_COPIES_WITHIN_MS } from '../store/events-repo.js';
import { EVENT_BUCKET_SIZE } from '../store/keys.js';
import { logger } from '../platform/logger.js';
import { LogReader } from './log-reader.js';
import { sleep } from '../platform/retry.js';
import { sleepUntilWrite, writeBellCount } from '../platform/write-bell.js';

export interface StreamTiming {
  /** The stream ends cleanly after this long (well under the function's time limit). */
  lifetimeMs: number;
  keepaliveMs: number;
  /** Poll interval while events flow, and the idle ceiling it backs off to. */
  fastPollMs: number;
  idlePollMs: number;
  /**
   * For `warmMs` after its last event (or its start) a stream polls at least every `warmPollMs`:
   * the next event of a conversation tends to follow soon (an agent's reply, a few seconds after
   * the user's message), and only polling finds it in AWS. A quiet connection pays nothing for
   * it; each burst of events costs the extra polls of one window. 0 turns it off.
   */
  warmMs: number;
  warmPollMs: number;
  /** How long a missing sequence number may be waited for before it is taken as a hole. */
  holeGraceMs: number;
  /** Ephemeral events are re-read this far back on every poll. */
  ephemeralOverlapMs: number;
  /**
   * The stream ends cleanly once this long has passed without an event (keepalives do not
   * count), so a client that went away stops costing a held function; 0 never releases.
   */
  idleReleaseMs: number;
  /** The `retry:` hint: how long a client waits before it reconnects after the stream ends. */
  reconnectMs: number;
  /**
   * Whether a write in this process (the write bell) ends the wait between polls. Always true
   * but in the bench's AWS-like figures: there, only polling finds a write, as in Lambda.
   */
  wakeOnWrites: boolean;
}

export const DEFAULT_TIMING: StreamTiming = {
  lifetimeMs: 14 * 60_000,
  keepaliveMs: 15_000,
  fastPollMs: 100,
  idlePollMs: 1000,
  /**
   * BENCH_ONLY=sse, writer and stream in separate processes (as in AWS): first event after 3-4 s
   * of quiet p50 78 ms, p95 190 ms (507 / 964 ms with plain 1 s polling; after 8-9 s, past the
   * window, 529 ms); one window costs 25 calls = 12.5 RRU per connection, nothing when nothing
   * happens.
   */
  warmMs: 6000,
  warmPollMs: 200,
  holeGraceMs: 10_000,
  ephemeralOverlapMs: 3000,
  /**
   * Chosen from BENCH_ONLY=sse (test/bench/sse-policy.ts). Lambda sees no client disconnect, so a
   * stream whose client is gone runs on: with this release, at most 5 minutes when quiet (14
   * before). A client that stays pays next to nothing for it: per always-open quiet
   * connection-month $4.77 against $4.76 (128 MB held, idle polling at 80 RRU/min, ~8,600
   * reconnects of ~26 RRU instead of ~3,100), and it is away 0.34% of the time, so that share of
   * events written after a quiet spell waits for the 1 s reconnect. Releasing sooner costs more in
   * reconnects than it saves (1 min: $4.86); only a long retry hint saves (2 min + 60 s: $3.23),
   * by leaving a third of those events up to a minute late, against the contract's "within about
   * one second".
   */
  idleReleaseMs: 5 * 60_000,
  reconnectMs: 1000,
  wakeOnWrites: true,
};

/** Polls that keep failing for this long end the stream (the client reconnects and resumes). */
const POLL_FAILURES_RELEASE_MS = 30_000;

export interface StreamQuery {
  cursor?: string | undefined;
  lastEventId?: string | undefined;
  ephemeral: boolean;
  limit: number;
}

/** Where a stream starts: persisted events with seq > afterSeq are delivered. */
export interface StreamStart {
  afterSeq: number;
  /**
   * A live start below the head (liveStart): the numbers above afterSeq that already held an
   * event when the stream opened (emitted before it: passed, not sent).
   */
  skip?: ReadonlySet<number>;
  /** Ephemeral events from this time on (connection time). */
  sinceMs: number;
}

/**
 * A live start reads the log back from the head over the numbers handed out recently: one whose
 * event is not there yet may belong to a transaction still committing, which must be delivered
 * (issue 33 item 20). It stops at the first event older than this: every number below it was
 * handed out before that event's own, and a writer commits within its function's deadline (at
 * most 29 s for a route) or is cut off; a number still missing then is decided by the hole logic.
 */
const LIVE_LOOKBACK_MS = 60_000;
/** Entries per read back (the first is usually the only one: the head is older than the window). */
const LIVE_LOOKBACK_PAGE = 10;
/** At most this many pages back (a busy log): the numbers below are taken as committed. */
const LIVE_LOOKBACK_PAGES = 5;

/**
 * The live start (§6.4: events emitted after the connection, none before). Its position is the
 * last number handed out, unless numbers below it hold nothing yet: then the stream starts below the
 * lowest of them and passes the numbers that held an event at connection time, so a transaction
 * that commits just after the connection is delivered (or, never committing, decided as a hole).
 * Costs one Query of LIVE_LOOKBACK_PAGE entries, eventually consistent (about 1 RRU), more only on
 * a log busier than that within LIVE_LOOKBACK_MS.
 */
async function liveStart(live: number, nowMs: number): Promise<StreamStart> {
  const present = new Set<number>();
  let lowestMissing: number | undefined;
  let expected = live;
  for (let page = 0; page < LIVE_LOOKBACK_PAGES && expected >= 1; page++) {
    const entries = await readLogBack(expected, LIVE_LOOKBACK_PAGE);
    let old = false;
    for (const entry of entries) {
      if (entry.seq < expected) lowestMissing = entry.seq + 1;
      present.add(entry.seq);
      expected = entry.seq - 1;
      if (!('void' in entry) && Date.parse(entry.timestamp) < nowMs - LIVE_LOOKBACK_MS) old = true;
      if (old) break;
    }
    if (old) break;
    if (entries.length < LIVE_LOOKBACK_PAGE) {
      // The bucket (or the log) begins here: what it lacks below is missing; on to the previous one.
      const bucketStart = expected - (expected % EVENT_BUCKET_SIZE);
      if (expected >= Math.max(bucketStart, 1)) lowestMissing = Math.max(bucketStart, 1);
      expected = bucketStart - 1;
    }
  }
  if (lowestMissing === undefined) return { afterSeq: live, sinceMs: nowMs };
  const skip = new Set([...present].filter((seq) => seq >= lowestMissing));
  return { afterSeq: lowestMissing - 1, skip, sinceMs: nowMs };
}

export const cursorNotFound = () => new FieldRuleError('cursor', 'cursor event id was not found.');

/**
 * Ephemeral events reach each client with an id naming the stream position they were sent at
 * (the last persisted number before them) and a check tag, so a browser's Last-Event-ID that
 * names one resumes at that position (§6.4), while it stays useless as a `cursor`.
 */
const positionTag = (seq: number) =>
  createHash('sha256').update(`ephemeral-position:${seq}`).digest('base64url').slice(0, 4);

export function ephemeralIdAt(seq: number): string {
  const id = eventIdFor(seq);
  return id.slice(0, 9) + positionTag(seq) + id.slice(13);
}

function positionOfEphemeralId(id: string): number | undefined {
  const seq = sequenceOf(id);
  return seq !== undefined && id.slice(9, 13) === positionTag(seq) ? seq : undefined;
}

/**
 * Resolves the start position (§6.4): `cursor` must name a persisted event (else 400);
 * without it, `Last-Event-ID` resumes after a persisted event or an ephemeral position, and
 * anything else starts live.
 */
export async function startOf(q: StreamQuery, nowMs: number): Promise<StreamStart> {
  if (q.cursor !== undefined) {
    const seq = sequenceOf(q.cursor);
    const event = seq === undefined ? undefined : await getEvent(seq);
    if (!event || event.id !== q.cursor) throw cursorNotFound();
    return { afterSeq: event.seq, sinceMs: nowMs };
  }
  const live = await currentSequence();
  if (q.lastEventId) {
    const seq = sequenceOf(q.lastEventId);
    if (seq !== undefined && seq <= live) {
      const event = await getEvent(seq);
      if (event?.id === q.lastEventId) return { afterSeq: seq, sinceMs: nowMs };
      const position = positionOfEphemeralId(q.lastEventId);
      if (position !== undefined) return { afterSeq: position, sinceMs: nowMs };
    }
  }
  return liveStart(live, nowMs);
}

export interface StreamSink {
  /** Writes a chunk; resolves when the bytes are handed to the transport. */
  write(text: string): Promise<void>;
  /** True once the client has gone or the transport failed. */
  readonly closed: boolean;
}

export const frame = (event: { id: string; type: string; timestamp: string; payload: unknown }): string =>
  `event: ${event.type}\ndata: ` +
  `${JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, payload: event.payload })}\nid: ` +
  `${event.id}\n\n`;

/**
 * Streams events to `sink` from `start` until the lifetime ends or the client goes away.
 * Writes the opening comment first and a closing comment plus a retry hint last.
 */
export async function runStream(
  sink: StreamSink,
  start: StreamStart,
  q: StreamQuery,
  timing: StreamTiming = DEFAULT_TIMING,
): Promise<void> {
  const openedAt = Date.now();
  const log = new LogReader({ afterSeq: start.afterSeq, skip: start.skip, holeGraceMs: timing.holeGraceMs });
  let lastSentSeq = start.afterSeq;
  let ephemeralFrom = start.sinceMs;
  const sentEphemeral = new Map<string, number>();
  let lastWrite = Date.now();
  let lastEvent = lastWrite;
  let pollMs = timing.fastPollMs;

  const send = async (text: string) => {
    await sink.write(text);
    lastWrite = Date.now();
  };

  await send(': stream opened\n\n');
  await send(`retry: ${timing.reconnectMs}\n\n`);

  /**
   * Ends the stream with a comment, the retry hint and an `id:` naming the position reached
   * (every number below the reader's next is delivered, voided or a confirmed hole). A browser's
   * EventSource takes that id as its Last-Event-ID even without data (WHATWG "dispatch the
   * event", step 1), so a client that has seen no event on this connection, or only ephemeral
   * ones, still resumes exactly here instead of starting live and missing what is written
   * while it reconnects. The `eventsource` package commits ids only with data: such a client
   * keeps the id of the last event it received, which resumes at or before this position, so
   * it misses nothing either, unless it never received one (then it starts live, as before).
   */
  const release = (reason: string) =>
    send(`: ${reason}\nid: ${ephemeralIdAt(log.nextSeq - 1)}\nretry: ${timing.reconnectMs}\n\n`);

  /** Delivers what the log holds from the reader's position on; returns how many events were sent. */
  const pollPersisted = async (): Promise<number> => {
    let sent = 0;
    for (;;) {
      const before = log.nextSeq;
      const page = await log.read(q.limit);
      for (const event of page.events) {
        await send(frame(event));
        lastEvent = lastWrite;
        lastSentSeq = event.seq;
        sent += 1;
        if (sink.closed) return sent;
      }
      // A full page means more may follow at once (replay); a bucket's end moves to the next.
      if (log.nextSeq === before) return sent;
      if (page.entries < q.limit && log.nextSeq % EVENT_BUCKET_SIZE !== 0) return sent;
    }
  };

  const pollEphemeral = async (): Promise<number> => {
    const now = Date.now();
    const from = Math.max(start.sinceMs, ephemeralFrom - timing.ephemeralOverlapMs);
    const entries: EphemeralEntry[] = await readEphemeralSince(from, now);
    entries.sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    let sent = 0;
    for (const e of entries) {
      // Sent already (this copy, or an earlier one of a late write: landEphemeral).
      const sentAt = sentEphemeral.get(e.id);
      if (sentAt !== undefined) {
        sentEphemeral.set(e.id, Math.max(sentAt, e.atMs));
        continue;
      }
      if (Date.parse(e.timestamp) < start.sinceMs) continue;
      sentEphemeral.set(e.id, e.atMs);
      await send(frame({ id: ephemeralIdAt(lastSentSeq), type: e.type, timestamp: e.timestamp, payload: e.payload }));
      lastEvent = lastWrite;
      sent += 1;
      if (sink.closed) return sent;
    }
    ephemeralFrom = now;
    // An id comes back only as a copy keyed inside a later window (from now - overlap on), and its
    // copies are keyed within EPHEMERAL_COPIES_WITHIN_MS of each other: older ids can go.
    const forgetBefore = now - timing.ephemeralOverlapMs - EPHEMERAL_COPIES_WITHIN_MS;
    for (const [id, at] of sentEphemeral) if (at < forgetBefore) sentEphemeral.delete(id);
    return sent;
  };

  /** Set while polls fail (a throttled or overloaded table): since when. */
  let failingSince: number | undefined;
  const poll = async (): Promise<number> => {
    try {
      const delivered = (await pollPersisted()) + (q.ephemeral ? await pollEphemeral() : 0);
      failingSince = undefined;
      return delivered;
    } catch (error) {
      // A failed read ends nothing: the positions moved only past what was sent, so the next poll
      // reads the rest (ephemeral events too, from where the last good poll was). Ending the
      // stream instead would lose every ephemeral event written before the client is back.
      failingSince ??= Date.now();
      if (Date.now() - failingSince >= POLL_FAILURES_RELEASE_MS) throw error;
      logger.warn('stream poll failed; polling again', { error });
      return 0;
    }
  };

  while (!sink.closed) {
    if (Date.now() - openedAt >= timing.lifetimeMs) {
      await release('stream lifetime reached; reconnect with the last event id as cursor');
      return;
    }
    // Taken before the reads: a write that lands while they run still ends the wait below.
    const rung = writeBellCount();
    const delivered = await poll();
    if (sink.closed) return;
    // Checked after a poll, so what was committed up to now is delivered first; never while a
    // gap is open (the next connection would wait out its grace period again).
    if (timing.idleReleaseMs > 0 && !log.waiting && Date.now() - lastEvent >= timing.idleReleaseMs) {
      await release('stream idle; reconnect with the last event id');
      return;
    }
    if (Date.now() - lastWrite >= timing.keepaliveMs) await send(': keepalive\n\n');
    pollMs = delivered > 0 || log.waiting ? timing.fastPollMs : Math.min(timing.idlePollMs, pollMs * 1.5);
    if (Date.now() - lastEvent < timing.warmMs) pollMs = Math.min(pollMs, timing.warmPollMs);
    // A write in this process (the local runtime) ends the wait early; in AWS it never rings here.
    const waitMs = Math.min(pollMs, timing.lifetimeMs - (Date.now() - openedAt));
    if (timing.wakeOnWrites) await sleepUntilWrite(waitMs, rung);
    else await sleep(waitMs);
  }
}
