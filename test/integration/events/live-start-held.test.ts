/**
 * A stream opened without a cursor misses nothing (issue 33 item 20). Writers take their event
 * numbers before they commit, so when a stream opens, a number below the last one handed out may
 * belong to a transaction still committing. Its event is emitted after the connection: the stream
 * delivers it, in sequence order, while events committed before the connection (below or above
 * it) are still not sent (§6.4: "nothing emitted before it").
 *
 * The slow commit is built with a fault: a DynamoDB middleware holds one transaction (the one that
 * writes the slow chat's event) after its number was reserved, until the test lets it go. Sources
 * only (test/rehearsal/suite.js SOURCE_ONLY): the middleware is on the test's own process's client;
 * a deployment's function cannot be held there. live-start.test.ts covers a start with nothing in flight.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { sequenceOf } from '../../../functions/store/events-repo.js';
import { ok, persisted, sleep, streamsApi } from './support.js';

const { api, s } = streamsApi();

const FAULT = 'test-hold-commit';
afterEach(() => {
  ddb().middlewareStack.remove(FAULT);
});

/** An attribute as the document client or the base client holds it. */
const plain = (v: any): any => (v && typeof v === 'object' && 'S' in v ? v.S : v);

/** Holds the transaction that writes `chatId`'s item and an event until `release()`; `held` resolves when it arrives. */
function holdCommitOf(chatId: string): { held: Promise<void>; release: () => void } {
  let arrived!: () => void;
  const held = new Promise<void>((ok) => (arrived = ok));
  let release!: () => void;
  const released = new Promise<void>((ok) => (release = ok));
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, any>;
      const writesItsEvent =
        (context.commandName === 'TransactWriteCommand' || context.commandName === 'TransactWriteItemsCommand') &&
        (input.TransactItems ?? []).some((t: any) => String(plain(t.Put?.Item?.pk)).startsWith('EVT#')) &&
        JSON.stringify(input.TransactItems).includes(`CHAT#${chatId}`);
      if (writesItsEvent) {
        arrived();
        await released;
      }
      return next(args);
    },
    { step: 'initialize', name: FAULT },
  );
  return { held, release };
}

const newChat = async () => ok(await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;

describe('a stream opened without a cursor', () => {
  it('delivers an event whose number was taken before it opened and whose commit came after', async () => {
    const slow = await newChat();
    const other = await newChat();
    const hold = holdCommitOf(slow.id);
    // The slow write takes its number (N), then its transaction waits.
    const slowWrite = api.patch(`/api/v1/chats/${slow.id}`, { title: 'committed late' });
    await hold.held;
    // N + 1: committed before the stream opens (emitted before it: not sent).
    ok(await api.post(`/api/v1/chats/${other.id}/mark-unread`));

    const c = await s.open('?ephemeral=false');
    // N + 2: after the stream opened.
    ok(await api.post(`/api/v1/chats/${other.id}/mark-read`));
    await sleep(300); // kept (time is the behavior): the commit of N comes after both
    hold.release();
    expect((await slowWrite).status).toBe(200);

    await c.waitFor((x) => persisted(x).length >= 2, 15_000);
    await sleep(300); // kept: an absence (nothing more may follow), observable only by waiting
    const got = persisted(c).map((e) => [e.event, e.data.payload.chatId]);
    expect(got).toEqual([
      ['chat.updated', slow.id],
      ['chat.read', other.id],
    ]);
    const seqs = persisted(c).map((e) => sequenceOf(e.id)!);
    expect(seqs[1]! - seqs[0]!).toBe(2);
    c.close();
  }, 40_000);
});
