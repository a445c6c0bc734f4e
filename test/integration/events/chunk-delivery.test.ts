/**
 * Every chunk reaches a connected client (issue 25 item 2): 10 writers stream 10 chunks each at
 * once, and the client must get every delta exactly once, in order per message, while the faults
 * a loaded host brings happen on purpose:
 * - some chunk events land seconds after the time in their key (a write queued behind others, an
 *   SDK retry after a timed-out attempt), past the window readers re-read: the writer copies a late
 *   event under a fresh key, and readers send an id once;
 * - the reader's reads fail for a while (an overloaded or throttled table): the stream polls again
 *   from where it was instead of ending, which would lose every chunk written until the client is
 *   back (ephemeral events are never replayed).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import type { SseConnection } from '../../support/sse.js';
import { ok, sleep, streamsApi } from './support.js';

const WRITERS = 10;
const CHUNKS = 10;
/** Beyond the readers' 3 s window (DEFAULT_TIMING.ephemeralOverlapMs) and its slowest poll. */
const LATE_MS = 5000;

const { api, s } = streamsApi();

type Fault = (command: string, input: Record<string, any>) => Promise<void> | void;
const FAULT = 'test-fault';
afterEach(() => {
  ddb().middlewareStack.remove(FAULT);
});
/** Runs `fault` before every DynamoDB call of this process (the API's handlers included). */
function inject(fault: Fault): void {
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      await fault(context.commandName ?? '', args.input as Record<string, any>);
      return next(args);
    },
    { step: 'initialize', name: FAULT },
  );
}
/** An attribute as the document client or the base client holds it. */
const plain = (v: any): any => (v && typeof v === 'object' && 'S' in v ? v.S : v);
const isEphemeralPut = (command: string, input: Record<string, any>) =>
  command === 'PutCommand' || command === 'PutItemCommand' ? String(plain(input.Item?.pk)).startsWith('EPH#') : false;
const isEphemeralRead = (command: string, input: Record<string, any>) =>
  (command === 'QueryCommand' && String(plain(input.ExpressionAttributeValues?.[':pk'])).startsWith('EPH#')) || false;

/** Streams CHUNKS chunks into each of WRITERS messages at once; returns the message ids. */
async function stream(): Promise<string[]> {
  const chat = ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
  const ids: string[] = [];
  for (let w = 0; w < WRITERS; w++) {
    const body = { role: 'agent', senderId: 'assistant', streaming: true };
    ids.push(ok(await api.post(`/api/v1/chats/${chat.id}/messages`, body)).body.id);
  }
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < CHUNKS; i++) ok(await api.post(`/api/v1/messages/${id}/chunks`, { deltaText: `${i};` }));
    }),
  );
  return ids;
}

/** Every message's deltas at the client are exactly 0;…9;, once each, in order. */
async function expectEveryDelta(c: SseConnection, ids: string[]): Promise<void> {
  const deltas = (id: string) =>
    c
      .events()
      .filter((e) => e.event === 'message.streaming.chunk' && e.data.payload.messageId === id)
      .map((e) => e.data.payload.deltaText as string);
  const all = Array.from({ length: CHUNKS }, (_, i) => `${i};`);
  await c.waitFor(() => ids.every((id) => deltas(id).length >= CHUNKS), 20_000).catch(() => undefined);
  // Kept: an absence (nothing more may follow), observable only by waiting
  await sleep(1000);
  expect(Object.fromEntries(ids.map((id) => [id, deltas(id)]))).toEqual(Object.fromEntries(ids.map((id) => [id, all])));
}

describe('chunk events at a connected client', () => {
  it(`gets all ${WRITERS * CHUNKS} deltas of ${WRITERS} concurrent writers once, in order, when some land late`, async () => {
    const delayed = new Set<string>();
    inject(async (command, input) => {
      if (!isEphemeralPut(command, input)) return;
      // Chunks 3 and 7 of every message land LATE_MS after their key time (the first try only).
      const payload = input.Item?.payload; // stored as a Map (functions/store/storable.ts), or marshalled
      const delta = payload instanceof Map ? payload.get('deltaText') : payload?.M?.deltaText?.S;
      const id = String(plain(input.Item?.id));
      if ((delta === '3;' || delta === '7;') && !delayed.has(id)) {
        delayed.add(id);
        // Kept (time is the behavior): this chunk write is late on purpose.
        await sleep(LATE_MS);
      }
    });
    const c = await s.open();
    const ids = await stream();
    expect(delayed.size).toBe(2 * WRITERS);
    await expectEveryDelta(c, ids);
    c.close();
  }, 120_000);

  it(`gets all ${WRITERS * CHUNKS} deltas of ${WRITERS} concurrent writers once, in order, when reads fail a while`, async () => {
    let failures = 0;
    let chunksWritten = 0;
    inject((command, input) => {
      if (isEphemeralPut(command, input)) chunksWritten += 1;
      // Once a third of the chunks are written, the reader's next 6 reads fail.
      if (isEphemeralRead(command, input) && chunksWritten >= (WRITERS * CHUNKS) / 3 && failures < 6) {
        failures += 1;
        throw Object.assign(new Error('injected: the table is overloaded'), {
          name: 'ProvisionedThroughputExceededException',
        });
      }
    });
    const c = await s.open();
    const ids = await stream();
    await expectEveryDelta(c, ids);
    expect(failures).toBe(6);
    c.close();
  }, 120_000);
});
