/**
 * Dispatch in `sequential` mode (contract §4.4.2, §13 item 7): every input is a batch of its
 * own at once; per chat, one batch in flight and creation order; other chats flow; the rule
 * holds with concurrent workers.
 */
import { describe, expect, it } from '@jest/globals';
import {
  LONG_BATCHING,
  QUICK_RETRIES,
  configWith,
  dispatchApi,
  runLoops,
  sleep,
  userBatch,
  userItem,
} from './support.js';
import type { Batch } from './support.js';

const config = configWith({ mode: 'sequential', ...LONG_BATCHING, ...QUICK_RETRIES, maxAttempts: 3 });

const { d } = dispatchApi(config);

/** Claims for w2, then w3, expects batches of these messages in that order, and completes both. */
async function claimInTurn(ids: string[]) {
  const second = await d.claimOne({ workerId: 'w2', waitMs: 2000 });
  const third = await d.claimOne({ workerId: 'w3', waitMs: 2000 });
  expect([second, third].map((x) => x.items[0]!.sourceId)).toEqual(ids);
  await d.completeOk(second.batchId, 'w2');
  await d.completeOk(third.batchId, 'w3');
}

describe('sequential mode', () => {
  it('makes each message its own batch at once, despite typing and the batching settings', async () => {
    await d.claimNone({ workerId: 'w1', waitMs: 0 });
    const chat = await d.newChat();
    await d.typing(chat.id);
    const id = await d.say(chat.id, 'right away');
    await d.typing(chat.id);
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 0 });
    expect(batch).toEqual(userBatch(chat.id, 'right away', [userItem(id, 'right away')]));
    await d.completeOk(batch.batchId, 'w1');
  });

  it("holds a chat's second batch while its first is leased, and hands them out in creation order", async () => {
    const chat = await d.newChat();
    const ids = [await d.say(chat.id, 'one'), await d.say(chat.id, 'two'), await d.say(chat.id, 'three')];
    for (const [i, id] of ids.entries()) {
      const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000, leaseMs: 20_000 });
      expect(batch.items.map((x) => x.sourceId)).toEqual([id]);
      expect(batch.compiledContent).toBe(['one', 'two', 'three'][i]);
      // Nothing else of this chat while it is held.
      await d.claimNone({ workerId: 'w2', waitMs: 800 });
      await d.completeOk(batch.batchId, 'w1');
    }
  });

  it('lets other chats flow while one is blocked, in creation order across chats', async () => {
    const { chat: a, id: a1 } = await d.chatWithMessage('a1');
    const a2 = await d.say(a.id, 'a2');
    const { id: b1 } = await d.chatWithMessage('b1');
    const c = await d.newChat();
    const c1 = await d.say(c.id, 'c1');
    const first = await d.claimOne({ workerId: 'w1', waitMs: 2000, leaseMs: 20_000 });
    const second = await d.claimOne({ workerId: 'w2', waitMs: 2000, leaseMs: 20_000 });
    const third = await d.claimOne({ workerId: 'w3', waitMs: 2000, leaseMs: 20_000 });
    expect([first, second, third].map((x) => x.items[0]!.sourceId)).toEqual([a1, b1, c1]);
    await d.claimNone({ workerId: 'w4', waitMs: 800 });
    await d.completeOk(third.batchId, 'w3');
    await d.completeOk(second.batchId, 'w2');
    await d.claimNone({ workerId: 'w4', waitMs: 500 });
    await d.completeOk(first.batchId, 'w1');
    await d.takeBatchOf([a2], { workerId: 'w4', waitMs: 2000 });
  });

  it(
    'orders claims across chats by available_at: a batch back from a retry goes behind one that was available ' +
      'earlier',
    async () => {
      const { id: a1 } = await d.chatWithMessage('a1');
      const { id: b1 } = await d.chatWithMessage('b1');
      const first = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
      expect(first.items[0]!.sourceId).toBe(a1);
      // Back at once, but available only from now: b1 has been available since its creation.
      await d.failOk(first.batchId, { workerId: 'w1', reason: 'again', retryable: true, retryDelayMs: 0 });
      // Kept (time is the behavior): available_at orders claims; the retried batch is available later.
      await sleep(200);
      await claimInTurn([b1, a1]);
    },
  );

  it(
    'orders claims across chats by available_at: an expired batch goes behind one that was available before it ' +
      'expired',
    async () => {
      const { id: c1 } = await d.chatWithMessage('c1');
      const first = await d.claimOne({ workerId: 'w1', waitMs: 2000, leaseMs: 1000 });
      expect(first.items[0]!.sourceId).toBe(c1);
      const { id: e1 } = await d.chatWithMessage('e1');
      // Kept (time is the behavior): the 1 s lease expires.
      await sleep(1500);
      await claimInTurn([e1, c1]);
    },
  );

  it('claim-many never returns two batches of one chat', async () => {
    const chat = await d.newChat();
    const ids = [await d.say(chat.id, 'x'), await d.say(chat.id, 'y'), await d.say(chat.id, 'z')];
    const res = await d.claimMany({ workerId: 'w1', waitMs: 2000, limit: 10 });
    expect(res.status).toBe(200);
    expect(res.body.batches.map((b) => b.items[0]!.sourceId)).toEqual([ids[0]]);
    await d.completeOk(res.body.batches[0]!.batchId, 'w1');
  });

  it('a media-only message is "(no text)"', async () => {
    const chat = await d.newChat();
    const media = await d.putMedia(chat.id, 'scan.png', 'image');
    const id = await d.say(chat.id, '', { trace: { mediaIds: [media] } });
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 2000 });
    expect(batch.compiledContent).toBe('(no text)');
    expect(batch.items).toEqual([userItem(id, '', { mediaIds: [media], attachmentNames: ['scan.png'] })]);
    await d.completeOk(batch.batchId, 'w1');
  });

  it('keeps one batch in flight per chat, in order, with 4 concurrent workers', async () => {
    const CHATS = 6;
    const PER_CHAT = 5;
    const chats: string[] = [];
    for (let i = 0; i < CHATS; i++) chats.push((await d.newChat()).id);
    const sent: string[][] = chats.map(() => []);
    const claimed: Batch[][] = chats.map(() => []);
    const held = new Map<string, string>();
    const violations: string[] = [];
    const errors: string[] = [];
    let completed = 0;
    let done = false;

    const senders = chats.map(async (chatId, c) => {
      for (let m = 0; m < PER_CHAT; m++) {
        sent[c]!.push(await d.say(chatId, `c${c} m${m}`));
        // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
        await sleep(20 * ((c + m) % 4));
      }
    });
    const worker = async (w: number) => {
      const workerId = `cw${w}`;
      while (!done) {
        const res = await d.claim({ workerId, waitMs: 1000, leaseMs: 20_000 });
        if (res.status !== 200) continue;
        const batch = res.body;
        const other = held.get(batch.chatId);
        if (other) violations.push(`${batch.batchId} claimed while ${other} held`);
        held.set(batch.chatId, batch.batchId);
        claimed[chats.indexOf(batch.chatId)]?.push(batch);
        // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
        await sleep(30 + ((w * 37) % 90));
        if (held.get(batch.chatId) === batch.batchId) held.delete(batch.chatId);
        const out = await d.complete(batch.batchId, workerId);
        if (out.status !== 204) errors.push(`${batch.batchId}: ${out.status} ${out.text}`);
        if (++completed >= CHATS * PER_CHAT) done = true;
      }
    };
    await runLoops(
      senders,
      () => [0, 1, 2, 3].map(worker),
      45_000,
      () => {
        done = true;
      },
    );
    expect(errors).toEqual([]);
    expect(violations).toEqual([]);
    for (let c = 0; c < CHATS; c++) {
      expect(claimed[c]!.every((b) => b.items.length === 1)).toBe(true);
      expect(claimed[c]!.map((b) => b.items[0]!.sourceId)).toEqual(sent[c]);
    }
  }, 60_000);
});
