/**
 * The local tails of the event log (local/event-tail.ts), which stand in for the table's stream
 * consumers: every persisted event handed over once, in order, holes waited out for their grace
 * and then stepped over; an idle tail backs off but wakes at a write made in this process (the
 * write bell), and stops at once however long its wait. Each tail here reads the table of this
 * file's local runtime; the timings that matter are shortened or stretched through `timing`.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';
import type * as EventTail from '../../../local/event-tail.js';
import type * as EventsRepo from '../../../functions/store/events-repo.js';

const api = useApi({
  config: { agents: [{ id: 'a', name: 'A', description: '' }], models: [{ id: 'm', name: 'M', description: '' }] },
});
let Tail: typeof EventTail;
let Repo: typeof EventsRepo;
beforeAll(async () => {
  // Imported once the environment is set (the store reads the table name when first used).
  Tail = await import('../../../local/event-tail.js');
  Repo = await import('../../../functions/store/events-repo.js');
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One persisted event at least (chat.created); resolves with the time its answer came. */
async function write(): Promise<number> {
  const res = await api.post('/api/v1/chats', { agentIds: ['a'], modelId: 'm' });
  expect(res.status).toBe(201);
  return Date.now();
}

interface Seen {
  seq: number;
  at: number;
}

/** A tail from the log's head that records what it is handed; resolves once it has its start. */
async function collect(options: { enabled?: () => Promise<boolean>; timing?: Partial<EventTail.TailTiming> }) {
  const seen: Seen[] = [];
  const from = (await Repo.currentSequence()) + 1;
  let started!: () => void;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const tail = Tail.startLogTail({
    name: 'test tail',
    start: async () => {
      const start = (await Repo.currentSequence()) + 1;
      started();
      return start;
    },
    consume: async (events) => {
      for (const event of events) seen.push({ seq: event.seq, at: Date.now() });
    },
    ...options,
  });
  // Else a write racing the tail's first read of the head could come before its start.
  await ready;
  return { seen, from, stop: () => tail.stop() };
}

/** The events the log holds from `from` to its head: what a tail from `from` must hand over. */
async function logFrom(from: number): Promise<number[]> {
  const head = await Repo.currentSequence();
  const seqs: number[] = [];
  for (let seq = from; seq <= head; seq++) if (await Repo.getEvent(seq)) seqs.push(seq);
  return seqs;
}

const seqs = (seen: Seen[]) => seen.map((s) => s.seq);

describe('local event-log tail', () => {
  it('an idle tail, backed off far, hands over an event written in this process at once', async () => {
    // Waits 100, 200, … ms, capped at a minute: polls at about 0, 0.1, 0.3, 0.7, 1.5, 3.1, 6.3
    // and 12.7 s. A write at 7.5 s has its next timed poll 5 s away; only the bell explains less.
    // (The grace is stretched too: an idle tail also polls when the grace of its wait at the
    // log's head ends, in case a number was taken there and never written.)
    const t = await collect({ timing: { pollMs: 50, idlePollMs: 60_000, holeGraceMs: 60_000 } });
    try {
      await sleep(7_500); // kept: the tail backing off is the behavior
      expect(t.seen).toEqual([]);
      const written = await write();
      await eventually(
        () => t.seen.length,
        (n) => n > 0,
        { timeoutMs: 5_000 },
      );
      expect(t.seen[0]!.at - written).toBeLessThan(2_500);
      await eventually(
        async () => (await logFrom(t.from)).length - t.seen.length,
        (n) => n === 0,
        { timeoutMs: 5_000 },
      );
      expect(seqs(t.seen)).toEqual(await logFrom(t.from));
    } finally {
      await t.stop();
    }
  });

  it('waits out a hole for its grace, steps over it, and hands over the rest once each, in order', async () => {
    const t = await collect({ timing: { holeGraceMs: 1_500, idlePollMs: 60_000 } });
    try {
      // A number taken and never written: a writer that died before its commit.
      const hole = await Repo.EventReservation.take(1);
      const holeAt = Date.now();
      await write();
      await eventually(
        () => t.seen.length,
        (n) => n > 0,
        { timeoutMs: 10_000 },
      );
      // Held back by the hole for about its grace, and no backed-off wait on top of it.
      expect(t.seen[0]!.at - holeAt).toBeGreaterThanOrEqual(1_400);
      expect(t.seen[0]!.at - holeAt).toBeLessThan(4_000);
      expect(t.seen[0]!.seq).toBeGreaterThan(hole.first);
      expect(await Repo.getEvent(hole.first)).toBeUndefined();
      // The hole is voided: writing it now fails, as a late writer's commit would.
      expect(await Repo.voidNumber(hole.first)).toBe(false);

      // A burst of writers committing side by side (numbers land out of order for a moment).
      await Promise.all(Array.from({ length: 12 }, () => write()));
      await eventually(
        async () => (await logFrom(t.from)).length - t.seen.length,
        (n) => n === 0,
        { timeoutMs: 15_000 },
      );
      expect(seqs(t.seen)).toEqual(await logFrom(t.from));
      expect(new Set(seqs(t.seen)).size).toBe(t.seen.length);
    } finally {
      await t.stop();
    }
  });

  it('while off, keeps the head in view after writes, and resumes from where it was turned on', async () => {
    let on = false;
    const t = await collect({ enabled: async () => on, timing: { idlePollMs: 60_000 } });
    try {
      await sleep(300); // kept: the tail's first look at the head
      await write(); // while off: never handed over
      const offHead = await Repo.currentSequence();
      // Longer than the off tail's least time between looks (1 s): the write must be in view.
      await sleep(1_500);
      on = true;
      const written = await write();
      await eventually(
        () => t.seen.length,
        (n) => n > 0,
        { timeoutMs: 5_000 },
      );
      expect(t.seen[0]!.at - written).toBeLessThan(2_500);
      await sleep(500); // kept: nothing more comes (the write while off stays behind)
      expect(seqs(t.seen)).toEqual(await logFrom(offHead + 1));
    } finally {
      await t.stop();
    }
  });

  it('backs off when idle, and reads a stream of writes at most once per poll period after a burst', async () => {
    let reads = 0;
    const counted = async () => {
      reads += 1; // the switch is looked at once per read
      return true;
    };
    const t = await collect({ enabled: counted, timing: { pollMs: 200, idlePollMs: 60_000 } });
    try {
      // Waits 400, 800, 1600 ms…: reads at about 0, 0.4, 1.2 and 2.8 s (15 at a steady 200 ms).
      await sleep(3_000); // kept: the tail backing off is the behavior
      expect(reads).toBeGreaterThanOrEqual(3);
      expect(reads).toBeLessThanOrEqual(5);
      // Writes one after another for 2 s: each rings the bell about three times.
      reads = 0;
      const began = Date.now();
      let writes = 0;
      while (Date.now() - began < 2_000) {
        await write();
        writes += 1;
      }
      const spent = Date.now() - began;
      expect(writes).toBeGreaterThan(3);
      // At most one read per 200 ms after a burst of three (and one in flight at the end).
      expect(reads).toBeLessThanOrEqual(Math.ceil(spent / 200) + 3 + 1);
      await eventually(
        async () => (await logFrom(t.from)).length - t.seen.length,
        (n) => n === 0,
        {
          timeoutMs: 5_000,
          intervalMs: 200,
        },
      );
      expect(seqs(t.seen)).toEqual(await logFrom(t.from));
    } finally {
      await t.stop();
    }
  });

  it('stops at once while waiting, however long its wait', async () => {
    const t = await collect({ timing: { pollMs: 50, idlePollMs: 60_000 } });
    // Kept: the tail in a long wait (its reads at about 3.2 s, then 6.4 s); 1.3 s after the read,
    // which a loaded machine may take some of (stop lets a read in flight end).
    await sleep(4_500);
    const asked = Date.now();
    await t.stop();
    expect(Date.now() - asked).toBeLessThan(1_000);
  });
});
