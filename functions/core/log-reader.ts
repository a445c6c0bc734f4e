/**
 * The one reader of the persisted event log (issue 35 item 3): the SSE stream (core/event-stream.ts)
 * and the local runtime's tails (local/event-tail.ts) read through it, so the subtle rule about
 * holes lives here only.
 *
 * Writers take numbers before they commit, so a number may be missing for a moment (its
 * transaction is committing) or for good (a writer that failed voids its numbers; one that died
 * leaves a hole). The reader never passes a missing number until it is voided. One that stays
 * missing for `holeGraceMs` the reader voids itself (a conditional put, which fails if the number
 * got used after all), so the first reader to wait out a hole decides it for every later one, and
 * a writer that would commit it after that writes again with a new number: nothing is skipped,
 * and nothing is read twice. A number the counter marks as handed out by a process that is gone
 * (`settled`: the local runtime's restart after a crash) is a hole at once.
 */
import { readLog, sequenceHead, voidNumber } from '../store/events-repo.js';
import type { LogEntry, LoggedEvent } from '../store/events-repo.js';

/** Holes voided side by side at most (a crash mid-burst leaves dozens in a row). */
const VOID_SLICE = 25;

export interface LogReaderOptions {
  /** Persisted events with seq > afterSeq are read. */
  afterSeq: number;
  /** Numbers above afterSeq that are passed, not read out (a live start's events from before it). */
  skip?: ReadonlySet<number>;
  /** How long a missing number is waited for before it is taken as a hole. */
  holeGraceMs: number;
}

export interface LogPage {
  /**
   * The events read, in sequence order (voided numbers, holes and skipped numbers left out), each
   * with its item as stored (the local runtime's stream records are made of it).
   */
  events: LoggedEvent[];
  /** Every number up to this one is read, voided or a decided hole. */
  through: number;
  /** Log entries the read returned (voided numbers included): fewer than asked for ends a replay's page. */
  entries: number;
}

export class LogReader {
  readonly #afterSeq: number;
  /** The next number to read. */
  #next: number;
  readonly #skip: ReadonlySet<number> | undefined;
  readonly #holeGraceMs: number;
  /** The number waited for, and since when it has been missing. */
  #gap: { seq: number; since: number } | undefined;
  /**
   * When this reader first knew each number to be handed out (a later entry read, or the counter):
   * ascending in both. A missing number has been missing since the first of these above it, so
   * holes a crash left in several runs between events all come due one grace after the read that
   * showed them, not one grace per run (issue 33 item 21).
   */
  readonly #known: { seq: number; at: number }[] = [];
  /**
   * Numbers handed out so far, checked only while a gap is open or the log looks idle for long;
   * and the counter's `settled`, which changes only when the local runtime starts (no reader
   * outlives that): read with it, or once at the first gap.
   */
  #lastHeadCheck = 0;
  #head: number;
  #settled: number | undefined;

  constructor(options: LogReaderOptions) {
    this.#afterSeq = options.afterSeq;
    this.#next = options.afterSeq + 1;
    this.#head = options.afterSeq;
    this.#skip = options.skip;
    this.#holeGraceMs = options.holeGraceMs;
  }

  /** The next number to read: every number below it is read, voided or a decided hole. */
  get nextSeq(): number {
    return this.#next;
  }

  /** Whether a missing number is waited for (a reader keeps polling at its flowing pace meanwhile). */
  get waiting(): boolean {
    return this.#gap !== undefined;
  }

  /** When the number waited for is due to be taken as a hole (undefined: none is waited for). */
  get gapDueAt(): number | undefined {
    return this.#gap ? this.#gap.since + this.#holeGraceMs : undefined;
  }

  /** Reads from `seq` on next time (a consumer that failed to take a page reads it again). */
  rewind(seq: number): void {
    this.#next = seq;
    this.#gap = undefined;
  }

  /**
   * One read of up to `limit` entries from nextSeq (one Query, eventually consistent), stepping
   * over voids and over holes that are due; stops at a number still waited for.
   */
  async read(limit: number): Promise<LogPage> {
    return this.#walk(await readLog(this.#next, limit));
  }

  async #walk(entries: LogEntry[]): Promise<LogPage> {
    const read = entries.length;
    const events: LoggedEvent[] = [];
    const last = entries.at(-1);
    if (last) this.#handedOutBy(last.seq);
    for (const entry of entries) {
      if (entry.seq < this.#next) continue;
      if (entry.seq > this.#next && !(await this.#stepOverHoles(entry.seq))) break;
      this.#gap = undefined;
      this.#next = entry.seq + 1;
      if ('void' in entry || this.#skip?.has(entry.seq)) continue;
      events.push(entry);
    }
    if (entries.length === 0) {
      // Nothing at nextSeq or after it in its bucket: numbers handed out up to the head are
      // missing (a hole at a bucket's end is voided, a slice at a time, once due).
      const head = await this.#headReserved();
      if (this.#next <= head) {
        await this.#holeConfirmed(head + 1);
        // Every number handed out is decided: none is waited for.
        if (this.#next > head) this.#gap = undefined;
      }
    }
    return { events, through: this.#next - 1, entries: read };
  }

  /** Steps over the missing numbers from nextSeq up to `present` - 1 that are due; whether it got there. */
  async #stepOverHoles(present: number): Promise<boolean> {
    while (this.#next < present) if (!(await this.#holeConfirmed(present))) return false;
    return true;
  }

  #handedOutBy(seq: number): void {
    if (seq > (this.#known.at(-1)?.seq ?? this.#afterSeq)) this.#known.push({ seq, at: Date.now() });
  }

  #missingSince(seq: number): number {
    while (this.#known.length > 0 && this.#known[0]!.seq <= seq) this.#known.shift();
    return this.#known[0]?.at ?? Date.now();
  }

  /**
   * nextSeq is missing while later numbers exist. Past the grace period it is a hole: this reader
   * voids it and moves past it. The void is the decision, recorded: every later reader passes
   * the number at once, and a writer that would still commit it fails and writes again with a new
   * number (events-repo.ts).
   */
  async #holeConfirmed(nextPresent: number): Promise<boolean> {
    if (!this.#gap || this.#gap.seq !== this.#next)
      this.#gap = { seq: this.#next, since: this.#missingSince(this.#next) };
    const byGrace = Date.now() - this.#gap.since >= this.#holeGraceMs;
    const through = byGrace ? Infinity : await this.#settledThrough();
    if (this.#next > through) return false;
    // The numbers after it, up to the next one read, were missing at least as long (one failed
    // writer may hold several, a crash many): voided side by side, in slices.
    const last = Math.min(nextPresent - 1, through, this.#next + VOID_SLICE - 1);
    const seqs = Array.from({ length: last - this.#next + 1 }, (_, i) => this.#next + i);
    const voided = await Promise.all(seqs.map((seq) => voidNumber(seq)));
    // A number that arrived after all stops the walk there: the next read gets it.
    const moved = voided.indexOf(false) === -1 ? seqs.length : voided.indexOf(false);
    this.#next += moved;
    this.#gap = { seq: this.#next, since: this.#gap.since };
    return moved === seqs.length;
  }

  async #readHead(): Promise<{ last: number; settled: number }> {
    const head = await sequenceHead();
    this.#settled = head.settled;
    this.#handedOutBy(head.last);
    return head;
  }

  /** The last number handed out, read at most every half grace (0 in between unless a gap is open). */
  async #headReserved(): Promise<number> {
    if (Date.now() - this.#lastHeadCheck < this.#holeGraceMs / 2) return this.#gap ? this.#head : 0;
    this.#lastHeadCheck = Date.now();
    this.#head = (await this.#readHead()).last;
    return this.#head;
  }

  async #settledThrough(): Promise<number> {
    return this.#settled ?? (await this.#readHead()).settled;
  }
}
