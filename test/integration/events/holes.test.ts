/**
 * Sequence holes (§6.4 ordering and latency, §13 item 5) with SSE_HOLE_GRACE_MS = 3000:
 * a voided number never delays delivery; a number reserved and never written delays later
 * events by about the grace period at most, and then they arrive once each, in order; a
 * number committed late (inside the grace) is delivered in its place in the sequence.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import type { SseConnection } from '../../support/sse.js';
import { ddb } from '../../../functions/store/db.js';
import type * as EventsRepo from '../../../functions/store/events-repo.js';
import { config, expectWellFramed, idsOf, lastLoggedId, logAfter, ok, persisted, sleep, streams } from './support.js';

/**
 * Twice the service's default, so that "prompt" (an idle reader's poll, about a second, and a
 * loaded machine's read) stays well apart from "held for the grace": PROMPT_MS below.
 */
const GRACE_MS = 3000;
/** Within the idle poll and a read on a loaded machine; a number taken for a hole would cost the grace on top. */
const PROMPT_MS = 2500;

const s = streams(() => api);
const api = useApi({ config, env: { SSE_HOLE_GRACE_MS: String(GRACE_MS) } });
let chatId: string;
let EventReservation: typeof EventsRepo.EventReservation;
let eventIdFor: typeof EventsRepo.eventIdFor;
let sequenceOf: typeof EventsRepo.sequenceOf;
beforeAll(async () => {
  // Imported once the environment is set (its logger reads the log level when loaded).
  ({ EventReservation, eventIdFor, sequenceOf } = await import('../../../functions/store/events-repo.js'));
  chatId = ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
});

/** One persisted event (chat.read or chat.unread); resolves with the time its answer came. */
const write = async (op: 'mark-read' | 'mark-unread' = 'mark-read') => {
  ok(await api.post(`/api/v1/chats/${chatId}/${op}`));
  return Date.now();
};
/** Waits until `c` has `n` persisted events; resolves with the time they were all there. */
const arrival = async (c: SseConnection, n: number, ms = 10_000) => {
  await c.waitFor((x) => persisted(x).length >= n, ms);
  return Date.now();
};
const seqOf = (id: string) => sequenceOf(id)!;

describe('sequence holes', () => {
  it('(a) a voided number does not delay delivery', async () => {
    const c = await s.open('?ephemeral=false');
    // Kept (time is the behavior): the reader has gone idle (slowest poll).
    await sleep(1200);
    const reservation = await EventReservation.take(1);
    await reservation.abandon();
    const written = await write();
    const arrived = await arrival(c, 1, 5000);
    // Within about a second; a void taken for a hole would cost the grace on top.
    expect(arrived - written).toBeLessThan(PROMPT_MS);
    const [event] = persisted(c);
    expect(seqOf(event!.id)).toBe(reservation.first + 1);
    expect(event!.data.payload).toEqual({ chatId });

    // Several voids in a row, then a burst of writes: all prompt, once each, in order.
    for (let i = 0; i < 3; i++) await (await EventReservation.take(2)).abandon();
    const burstWritten = await write('mark-unread');
    await write('mark-read');
    const burstArrived = await arrival(c, 3, 5000);
    expect(burstArrived - burstWritten).toBeLessThan(PROMPT_MS);
    // Kept: an absence (nothing more may follow), observable only by waiting
    await sleep(300);
    expect(persisted(c).map((e) => e.event)).toEqual(['chat.read', 'chat.unread', 'chat.read']);
    c.close();
  });

  it(
    '(b) a number never written delays later events by about the grace period at most, then they arrive once each, ' +
      'in order',
    async () => {
      const before = await lastLoggedId(api);
      const c = await s.open('?ephemeral=false');
      const hole = await EventReservation.take(1); // never committed nor voided
      const written = await write('mark-unread');
      await write('mark-read');
      await write('mark-unread');
      const arrived = await arrival(c, 3, GRACE_MS + 5000);
      // The grace period, plus an idle poll and a few reads of slack.
      expect(arrived - written).toBeLessThan(GRACE_MS + 2000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(500);
      const expected = await logAfter(api, before);
      expect(idsOf(persisted(c))).toEqual(idsOf(expected));
      expect(persisted(c).map((e) => e.event)).toEqual(['chat.unread', 'chat.read', 'chat.unread']);
      expect(seqOf(persisted(c)[0]!.id)).toBe(hole.first + 1);

      // Past the hole, delivery is prompt again.
      // Kept (time is the behavior): past the hole, the reader is idle again.
      await sleep(1200);
      const next = await write('mark-read');
      expect((await arrival(c, 4, 5000)) - next).toBeLessThan(PROMPT_MS);
      expect(persisted(c)).toHaveLength(4);
      c.close();
    },
  );

  it('(b2) a hole at the tail, older than the grace, does not hold back the next write for long', async () => {
    const c = await s.open('?ephemeral=false');
    const hole = await EventReservation.take(1);
    // Kept (time is the behavior): the reader has seen the hole and waited out its grace.
    await sleep(GRACE_MS * 2 + 500);
    const written = await write();
    const arrived = await arrival(c, 1, GRACE_MS + 5000);
    expect(arrived - written).toBeLessThan(GRACE_MS + 2000);
    expect(seqOf(persisted(c)[0]!.id)).toBe(hole.first + 1);
    c.close();
  });

  it('(c) a late commit inside the grace is delivered in sequence order, before the later event', async () => {
    const before = await lastLoggedId(api);
    const c = await s.open('?ephemeral=false');
    const late = await EventReservation.take(1);
    await write(); // its event takes a higher number
    // Kept (time is the behavior): the commit comes late, inside the grace.
    await sleep(500);
    // The reserved number is committed now, well inside the grace period.
    await ddb().send(
      new TransactWriteCommand({
        TransactItems: late
          .items([{ type: 'chat.updated', payload: { chatId: 'x' } }], new Date().toISOString())
          .map((w) => w.item),
      }),
    );
    await arrival(c, 2, GRACE_MS + 5000);
    // Kept: an absence (nothing more may follow), observable only by waiting
    await sleep(500);
    const log = await logAfter(api, before);
    expect(log.map((e) => e.seq)).toEqual([late.first, late.first + 1]);
    expect(idsOf(persisted(c))).toEqual(idsOf(log));
    expect(persisted(c).map((e) => [e.event, e.data.payload])).toEqual([
      ['chat.updated', { chatId: 'x' }],
      ['chat.read', { chatId }],
    ]);
    expect(persisted(c)[0]!.id.slice(0, 9)).toBe(eventIdFor(late.first).slice(0, 9));
    expectWellFramed(c);
    c.close();
  });

  it('every event of the file is in the log once, holes and voids excepted', async () => {
    const log = await readEvents(api.tableName);
    expect(new Set(idsOf(log)).size).toBe(log.length);
    for (let i = 1; i < log.length; i++) expect(log[i]!.seq).toBeGreaterThan(log[i - 1]!.seq);
  });
});
