/**
 * The one reader of the event log (functions/core/log-reader.ts), which the SSE stream and the
 * local runtime's tails both read through: events in sequence order; a number handed out but not
 * written is waited for, then voided after its grace and stepped over; a number written within
 * its grace is read, not voided; skipped numbers are passed; a rewound reader reads a page again.
 * On the table of this file's local runtime, with a short grace.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { useApi } from '../../support/api.js';
import type * as LogReaderModule from '../../../functions/core/log-reader.js';
import type * as EventsRepo from '../../../functions/store/events-repo.js';

const api = useApi({
  config: { agents: [{ id: 'a', name: 'A', description: '' }], models: [{ id: 'm', name: 'M', description: '' }] },
});
let Reader: typeof LogReaderModule;
let Repo: typeof EventsRepo;
let putItem: (item: Record<string, unknown>) => Promise<void>;
let eventKey: (seq: number) => { pk: string; sk: string };
beforeAll(async () => {
  // Imported once the environment is set (the store reads the table name when first used).
  Reader = await import('../../../functions/core/log-reader.js');
  Repo = await import('../../../functions/store/events-repo.js');
  const { ddb, tableName } = await import('../../../functions/store/db.js');
  const { Keys } = await import('../../../functions/store/keys.js');
  eventKey = Keys.event;
  putItem = async (item) => {
    await ddb().send(new PutCommand({ TableName: tableName(), Item: item }));
  };
});

const GRACE_MS = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Creates a chat (one persisted event, chat.created, at least); returns the log's head after it. */
async function write(): Promise<number> {
  const res = await api.post('/api/v1/chats', { agentIds: ['a'], modelId: 'm' });
  expect(res.status).toBe(201);
  return Repo.currentSequence();
}

describe('the event log reader', () => {
  it('reads in order, waits for a number handed out but not written, and voids it after its grace', async () => {
    const from = await Repo.currentSequence();
    const first = await write();
    const missing = await Repo.reserveSequence(1);
    const after = await write();
    const reader = new Reader.LogReader({ afterSeq: from, holeGraceMs: GRACE_MS });

    const page = await reader.read(100);
    expect(page.events.map((e) => e.seq)).toEqual(Array.from({ length: first - from }, (_, i) => from + 1 + i));
    expect(page.through).toBe(missing - 1);
    expect(reader.waiting).toBe(true);
    expect(reader.gapDueAt).toBeGreaterThan(Date.now());

    await sleep(GRACE_MS + 50);
    const next = await reader.read(100);
    expect(next.events.map((e) => e.seq)).toEqual(Array.from({ length: after - missing }, (_, i) => missing + 1 + i));
    expect(next.through).toBe(after);
    expect(reader.waiting).toBe(false);
    // The void is the decision, for every later reader: one from the start passes it at once.
    const again = new Reader.LogReader({ afterSeq: from, holeGraceMs: 3_600_000 });
    expect((await again.read(100)).through).toBe(after);
    expect(await Repo.voidNumber(missing)).toBe(false);
  });

  it('reads a number written within its grace instead of voiding it', async () => {
    const from = await Repo.currentSequence();
    const late = await Repo.reserveSequence(1);
    const after = await write();
    const reader = new Reader.LogReader({ afterSeq: from, holeGraceMs: GRACE_MS });
    expect((await reader.read(100)).through).toBe(from);
    // The writer commits its number (as its transaction would) before the grace ends.
    await putItem({
      ...eventKey(late),
      type: 'event',
      seq: late,
      id: Repo.eventIdFor(late),
      eventType: 'chat.updated',
      timestamp: new Date().toISOString(),
      payload: { chatId: 'late' },
    });
    const page = await reader.read(100);
    expect(page.events[0]).toMatchObject({ seq: late, type: 'chat.updated', payload: { chatId: 'late' } });
    expect(page.through).toBe(after);
  });

  it('passes skipped numbers without reading them out, and reads a page again once rewound', async () => {
    const from = await Repo.currentSequence();
    await write();
    const head = await write();
    const reader = new Reader.LogReader({ afterSeq: from, skip: new Set([from + 1]), holeGraceMs: GRACE_MS });
    const page = await reader.read(100);
    expect(page.events.map((e) => e.seq)).toEqual(Array.from({ length: head - from - 1 }, (_, i) => from + 2 + i));
    expect(page.through).toBe(head);
    reader.rewind(from + 2);
    expect((await reader.read(100)).events.map((e) => e.seq)).toEqual(page.events.map((e) => e.seq));
  });
});
