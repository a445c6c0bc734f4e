/**
 * Holes are decided once (issue 25 item 1). A writer killed between taking its event numbers and
 * committing (kill -9: it cannot void them) leaves holes. The first reader that waits one out
 * (SSE_HOLE_GRACE_MS) voids the number, so every later reader replaying across it passes it at
 * once: here a second replay with a grace of an hour gets every event. And a writer whose
 * transaction comes after that void does not overwrite it: its transaction fails and the write
 * runs again with a new number, so its event is delivered once, late, in the sequence.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import { NO_DEADLINE } from '../../../functions/platform/deadline.js';
import { ddb, tableName, transact } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import type * as EventsRepo from '../../../functions/store/events-repo.js';
import { config, idsOf, lastLoggedId, logAfter, ok, persisted, sleep, streams } from './support.js';
import { eventually } from '../../support/wait.js';

const GRACE_MS = 400;
const HOLES = 8;
const AN_HOUR = String(3_600_000);

const s = streams(() => api);
const api = useApi({ config, env: { SSE_HOLE_GRACE_MS: String(GRACE_MS) } });
let chatId: string;
let Events: typeof EventsRepo;
beforeAll(async () => {
  // Imported once the environment is set (its logger reads the log level when loaded).
  Events = await import('../../../functions/store/events-repo.js');
  chatId = ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
});

const write = async (op: 'mark-read' | 'mark-unread') => ok(await api.post(`/api/v1/chats/${chatId}/${op}`));

/** What number `seq` holds, read strongly consistent: an event, a void, or nothing. */
async function holding(seq: number): Promise<'event' | 'void' | 'nothing'> {
  const out = await ddb().send(new GetCommand({ TableName: tableName(), Key: Keys.event(seq), ConsistentRead: true }));
  return !out.Item ? 'nothing' : out.Item.void ? 'void' : 'event';
}

describe('hole decisions', () => {
  it(`the first reader to wait out ${HOLES} holes voids them, and a later replay waits for none`, async () => {
    const before = (await lastLoggedId(api))!;
    const holes: number[] = [];
    for (let i = 0; i < HOLES; i++) {
      // Numbers taken by a writer that died before committing or voiding them.
      holes.push((await Events.EventReservation.take(1)).first);
      await write(i % 2 === 0 ? 'mark-unread' : 'mark-read');
    }
    const expected = idsOf(await logAfter(api, before));
    expect(expected).toHaveLength(HOLES);

    const first = await s.open(`?ephemeral=false&cursor=${before}`);
    await first.waitFor((x) => persisted(x).length >= HOLES, HOLES * GRACE_MS + 15_000);
    expect(idsOf(persisted(first))).toEqual(expected);
    first.close();
    // The decisions are recorded: each hole now holds a void.
    expect(await Promise.all(holes.map(holding))).toEqual(holes.map(() => 'void'));

    // A reader that would wait an hour for each hole replays across all of them at once.
    api.setEnv({ SSE_HOLE_GRACE_MS: AN_HOUR });
    try {
      const later = await s.open(`?ephemeral=false&cursor=${before}`);
      await later.waitFor((x) => persisted(x).length >= HOLES, 15_000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(300);
      expect(idsOf(persisted(later))).toEqual(expected);
      later.close();
    } finally {
      api.setEnv({ SSE_HOLE_GRACE_MS: String(GRACE_MS) });
    }
  }, 90_000);

  it('a writer whose transaction comes after a reader voided its number writes its event again, delivered once', async () => {
    const before = (await lastLoggedId(api))!;
    const c = await s.open('?ephemeral=false');
    let runs = 0;
    let firstNumber = 0;
    const late = Events.withEvents(
      [{ type: 'chat.updated', payload: { chatId: 'late' } }],
      new Date().toISOString(),
      async (items) => {
        runs += 1;
        if (runs === 1) {
          firstNumber = Events.sequenceOf(String(items[0]!.item.Put!.Item!.id))!;
          // A later event exists, so the open reader takes the number for a hole once its grace is over
          // (a writer slowed down past the grace: a frozen or overloaded function).
          await write('mark-read');
          await eventually(
            () => holding(firstNumber),
            (held) => held === 'void',
            { timeoutMs: 20_000, intervalMs: 50, what: 'the reader voiding the number' },
          );
          expect(await holding(firstNumber)).toBe('void');
          // The number is taken: the transaction's own condition refuses it (nothing is written).
          await expect(
            ddb().send(new TransactWriteCommand({ TransactItems: items.map((i) => i.item) })),
          ).rejects.toMatchObject({ name: 'TransactionCanceledException' });
        }
        await transact(items, NO_DEADLINE);
      },
    );
    await late;
    expect(runs).toBe(2);
    expect(await holding(firstNumber)).toBe('void');

    // The log: the read, then the late event under a new number; the client gets both once, in order.
    const log = await logAfter(api, before);
    expect(log.map((e) => e.type)).toEqual(['chat.read', 'chat.updated']);
    expect(log[1]!.seq).toBeGreaterThan(firstNumber);
    await c.waitFor((x) => persisted(x).length >= 2, 15_000);
    // Kept: an absence (nothing more may follow), observable only by waiting
    await sleep(300);
    expect(idsOf(persisted(c))).toEqual(idsOf(log));
    expect(persisted(c).map((e) => e.data.payload)).toEqual([{ chatId }, { chatId: 'late' }]);
    c.close();
  }, 60_000);

  it('every number of the file holds an event or a void, none twice', async () => {
    const log = await readEvents(api.tableName);
    expect(new Set(idsOf(log)).size).toBe(log.length);
    const last = await Events.currentSequence();
    const taken = await Promise.all(Array.from({ length: last }, (_, i) => holding(i + 1)));
    expect(taken.filter((t) => t === 'nothing')).toEqual([]);
  });
});
