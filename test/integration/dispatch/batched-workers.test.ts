/**
 * Dispatch under load in batched_sequential mode (contract §4.4.2, §4.4.3, §13 item 7): 200
 * user messages over 20 chats, sent with some pacing per chat, consumed by 4 concurrent
 * worker loops over HTTP (claim → sometimes heartbeat → complete). Every input lands in
 * exactly one batch, each chat's inputs come out in creation order, and a chat never has two
 * batches held by workers at once.
 */
import { describe, expect, it } from '@jest/globals';
import { QUICK_RETRIES, blocks, configWith, dispatchApi, runLoops, sleep } from './support.js';
import type { Batch } from './support.js';

const config = configWith({
  mode: 'batched_sequential',
  // A debounce above a loaded machine's message POST time (about 1.5 s with 20 senders on 2
  // cores), so quick successive messages merge whatever the machine.
  batchDebounceMs: 2000,
  typingGraceMs: 1000,
  maxBatchWaitMs: 4000,
  ...QUICK_RETRIES,
  maxAttempts: 3,
});

const { d } = dispatchApi(config, { drainAfterEach: false });

const CHATS = 20;
const PER_CHAT = 10;
const WORKERS = 4;

/** A small deterministic generator, so a failing run can be reasoned about. */
function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('batched_sequential with concurrent workers', () => {
  it(
    'delivers 200 inputs over 20 chats to 4 workers: each once, in chat order, one batch per chat in ' + 'flight',
    async () => {
      const chats: string[] = [];
      for (let i = 0; i < CHATS; i++) chats.push((await d.newChat()).id);
      const chatIndex = new Map(chats.map((id, i) => [id, i]));
      /** Message ids per chat, in creation order (each chat's sender awaits every post). */
      const sent: string[][] = chats.map(() => []);
      const total = CHATS * PER_CHAT;

      // Client-side lease tracking. A batch is "held" from its claim response until its
      // complete request is sent; claiming a chat's batch while another of its batches is held
      // is a violation. (A claim answered while a complete is in flight is not: the server may
      // have finished that complete already.)
      const held = new Map<string, string>(); // chatId -> batchId held (complete not yet sent)
      const violations: string[] = [];
      const claimedIds = new Set<string>();
      const duplicateClaims: string[] = [];
      const perChatBatches: Batch[][] = chats.map(() => []);
      const seenInputs = new Map<string, number>(); // message id -> times seen in a completed batch
      const completeErrors: string[] = [];
      let done = false;

      const senders = chats.map(async (chatId, c) => {
        const random = rng(1000 + c);
        // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
        await sleep(Math.floor(random() * 400));
        for (let m = 0; m < PER_CHAT && !done; m++) {
          sent[c]!.push(await d.say(chatId, `chat ${c} message ${m}`));
          // Mostly within the debounce (merged), sometimes beyond it (a new batch).
          const gap = random() < 0.75 ? random() * 200 : 2300 + random() * 700;
          // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
          await sleep(Math.floor(gap));
        }
      });

      const worker = async (w: number) => {
        const workerId = `worker-${w}`;
        const random = rng(77 + w);
        while (!done) {
          const res = await d.claim({ workerId, waitMs: 2000, leaseMs: 20_000 });
          if (res.status === 204) continue;
          if (res.status !== 200) {
            completeErrors.push(`${workerId} claim: ${res.status} ${res.text}`);
            continue;
          }
          const batch = res.body;
          if (claimedIds.has(batch.batchId)) duplicateClaims.push(batch.batchId);
          claimedIds.add(batch.batchId);
          const other = held.get(batch.chatId);
          if (other !== undefined)
            violations.push(`chat ${batch.chatId}: ${batch.batchId} claimed by ${workerId} while ${other} was held`);
          held.set(batch.chatId, batch.batchId);
          const c = chatIndex.get(batch.chatId);
          if (c === undefined) {
            completeErrors.push(`unknown chat ${batch.chatId}`);
          } else {
            perChatBatches[c]!.push(batch);
          }
          // Work for a while, heartbeating now and then.
          // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
          await sleep(100 + Math.floor(random() * 500));
          if (random() < 0.5) {
            const hb = await d.heartbeat(batch.batchId, { workerId, extendMs: 20_000 });
            if (hb.status !== 204)
              completeErrors.push(`${workerId} heartbeat ${batch.batchId}: ${hb.status} ${hb.text}`);
            // Kept (time is the behavior): the simulated users' and workers' pace is the workload.
            await sleep(Math.floor(random() * 100));
          }
          if (held.get(batch.chatId) === batch.batchId) held.delete(batch.chatId);
          const completed = await d.complete(batch.batchId, workerId);
          if (completed.status !== 204) {
            completeErrors.push(`${workerId} complete ${batch.batchId}: ${completed.status} ${completed.text}`);
            continue;
          }
          for (const item of batch.items) seenInputs.set(item.sourceId, (seenInputs.get(item.sourceId) ?? 0) + 1);
          if (seenInputs.size >= total) done = true;
        }
      };

      // Well inside the test's own timeout, so a slow machine fails on the assertions below (with
      // what was missing) rather than on a timeout with loops still talking to a closed server.
      const workers = () => Array.from({ length: WORKERS }, (_, w) => worker(w));
      await runLoops(senders, workers, 180_000, () => {
        done = true;
      });

      expect(completeErrors).toEqual([]);
      expect(violations).toEqual([]);
      expect(duplicateClaims).toEqual([]);
      // Every input in exactly one completed batch.
      const allSent = sent.flat();
      expect(allSent).toHaveLength(total);
      expect(allSent.filter((id) => seenInputs.get(id) !== 1)).toEqual([]);
      expect(seenInputs.size).toBe(total);
      // Per chat: the items of its batches, in claim order, are its messages in creation order.
      for (let c = 0; c < CHATS; c++) {
        const items = perChatBatches[c]!.flatMap((b) => b.items);
        expect({ chat: c, order: items.map((i) => i.sourceId) }).toEqual({ chat: c, order: sent[c] });
        for (const b of perChatBatches[c]!) {
          expect(b).toMatchObject({ chatId: chats[c], kind: 'user_batch', agentIdHint: 'assistant', attachments: [] });
          const contents = b.items.map((i) => i.content);
          expect(b.compiledContent).toBe(contents.length === 1 ? contents[0] : blocks(contents));
          for (const item of b.items)
            expect(item).toMatchObject({
              sourceKind: 'user_message',
              senderId: 'user:primary',
              mediaIds: [],
              attachmentNames: [],
            });
        }
      }
      // Batching happened: fewer batches than inputs.
      const batchCount = perChatBatches.reduce((n, b) => n + b.length, 0);
      expect(batchCount).toBeLessThan(total);
      expect(batchCount).toBeGreaterThanOrEqual(CHATS);
      // Nothing is left behind.
      expect(await d.drain(500)).toEqual([]);
    },
    240_000,
  );
});
