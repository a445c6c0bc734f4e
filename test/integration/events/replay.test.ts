/**
 * Cursor replay over a long log (§6.4, §5.9, §13 item 5): 1,000 persisted events, replayed
 * in batches of `limit`, exactly once each and in sequence order; a reconnect with the last
 * received id resumes without loss or repetition; Last-Event-ID resumes like a cursor.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import type { LoggedEvent } from '../../support/events.js';
import { config, expectWellFramed, idsOf, logAfter, ok, persisted, pool, sleep, streams } from './support.js';
import { eventually } from '../../support/wait.js';

const CHATS = 100;
const EVENTS = 1000;
/** Events written during the live phase of the first connection and after it dropped. */
const LIVE = 80;

const s = streams(() => api);
const api = useApi({ config });
let chatIds: string[] = [];
let log: LoggedEvent[] = [];

beforeAll(async () => {
  // 100 chats × (created + 9 of archived, unarchived, unread, read) = 1,000 persisted events,
  // written by the services the routes' handlers call (the same transactions and events; the
  // replay is what is tested, and the HTTP around 1,000 writes only cost time: measured alone on
  // a loaded machine, the file took 38 s with them through HTTP, 33 s so). Imported now: the
  // handlers' modules read the environment useApi set up, once.
  const { create } = await import('../../../functions/core/chat-create.js');
  const Chats = await import('../../../functions/core/chat-updates.js');
  const { getConfig } = await import('../../../functions/core/instance-config.js');
  const { NO_DEADLINE } = await import('../../../functions/platform/deadline.js');
  const instance = await getConfig();
  const ops: ((chatId: string) => Promise<void>)[] = [
    (id) => Chats.setArchived(id, true, NO_DEADLINE),
    (id) => Chats.setArchived(id, false, NO_DEADLINE),
    (id) => Chats.markUnread(id, NO_DEADLINE),
    (id) => Chats.markRead(id, NO_DEADLINE),
  ];
  chatIds = await pool(
    10,
    Array.from(
      { length: CHATS },
      () => async () => (await create(instance, { agentIds: ['assistant'], modelId: 'm' }, NO_DEADLINE)).id,
    ),
  );
  await pool(
    10,
    chatIds.map((id) => async () => {
      for (let i = 0; i < 9; i++) await ops[i % ops.length]!(id);
    }),
  );
  log = await readEvents(api.tableName);
}, 300_000);

/** Writes `count` persisted events (mark-read/unread over the chats), a few at a time. */
const writeEvents = (count: number, width = 4) =>
  pool(
    width,
    Array.from(
      { length: count },
      (_, i) => async () =>
        ok(await api.post(`/api/v1/chats/${chatIds[i % CHATS]}/${i % 2 ? 'mark-read' : 'mark-unread'}`)),
    ),
  );

describe('cursor replay of 1,000 events', () => {
  it('holds 1,000 persisted events in strictly increasing sequence', () => {
    expect(log).toHaveLength(EVENTS);
    for (let i = 1; i < log.length; i++) expect(log[i]!.seq).toBeGreaterThan(log[i - 1]!.seq);
  });

  it(
    'replays exactly the events after the cursor, then resumes after a mid-live disconnect without loss or ' +
      'repetition',
    async () => {
      const cursor = log[4]!.id;
      const expectedReplay = idsOf(log.slice(5));
      const first = await s.open(`?cursor=${cursor}&limit=200`);
      await first.waitFor((x) => persisted(x).length >= expectedReplay.length, 20_000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(300);
      expect(idsOf(persisted(first))).toEqual(expectedReplay);
      expect(persisted(first).map((e) => e.data)).toEqual(
        log.slice(5).map((e) => ({ id: e.id, type: e.type, timestamp: e.timestamp, payload: e.payload })),
      );
      expectWellFramed(first);

      // Live phase: writers keep going; the first connection drops in the middle of it.
      const writing = writeEvents(LIVE);
      await first.waitFor((x) => persisted(x).length >= expectedReplay.length + 25, 20_000);
      first.close();
      const received = persisted(first);
      const last = received.at(-1)!.id;
      // Some events are written while no connection is open.
      await eventually(
        () => logAfter(api, last),
        (after) => after.length >= 5,
        { what: 'events written after the drop' },
      );
      const second = await s.open(`?cursor=${last}&limit=200`);
      await writing;
      const total = (await readEvents(api.tableName)).length;
      expect(total).toBe(EVENTS + LIVE);
      const expectedAll = idsOf(await logAfter(api, cursor));
      await second.waitFor((x) => received.length + persisted(x).length >= expectedAll.length, 20_000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(300);
      const union = [...idsOf(received), ...idsOf(persisted(second))];
      expect(union).toHaveLength(expectedAll.length);
      expect(new Set(union).size).toBe(union.length);
      expect(union).toEqual(expectedAll);
      second.close();
    },
    60_000,
  );

  it('replays in batches of any limit, including 1 and an odd size', async () => {
    for (const [from, limit] of [
      [980, 1],
      [700, 7],
    ] as const) {
      const expected = idsOf(await logAfter(api, log[from]!.id));
      const c = await s.open(`?cursor=${log[from]!.id}&limit=${limit}&ephemeral=false`);
      await c.waitFor((x) => persisted(x).length >= expected.length, 20_000);
      // Kept: an absence (nothing more may follow), observable only by waiting
      await sleep(300);
      expect({ limit, ids: idsOf(persisted(c)) }).toEqual({ limit, ids: expected });
      c.close();
    }
  });

  it('resumes after a Last-Event-ID header exactly like a cursor, and a cursor wins over it', async () => {
    const resumeAt = log[500]!.id;
    const expected = idsOf(await logAfter(api, resumeAt));
    const viaHeader = await s.open('', { 'last-event-id': resumeAt });
    await viaHeader.waitFor((x) => persisted(x).length >= expected.length, 20_000);
    // Kept: an absence (nothing more may follow), observable only by waiting
    await sleep(300);
    expect(idsOf(persisted(viaHeader))).toEqual(expected);
    // Then live, like any stream.
    await writeEvents(3, 1);
    const withLive = idsOf(await logAfter(api, resumeAt));
    await viaHeader.waitFor((x) => persisted(x).length >= withLive.length, 5000);
    expect(idsOf(persisted(viaHeader))).toEqual(withLive);
    viaHeader.close();

    const cursorAt = log[990]!.id;
    const both = await s.open(`?cursor=${cursorAt}`, { 'last-event-id': log[100]!.id });
    const afterCursor = idsOf(await logAfter(api, cursorAt));
    await both.waitFor((x) => persisted(x).length >= afterCursor.length, 10_000);
    // Kept: an absence (nothing more may follow), observable only by waiting
    await sleep(300);
    expect(idsOf(persisted(both))).toEqual(afterCursor);
    both.close();
  });
});
