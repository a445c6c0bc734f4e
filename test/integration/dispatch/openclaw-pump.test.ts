/**
 * The OpenClaw plugin's worker pattern, unchanged, against the default configuration and the
 * runtime as `npm start` runs it (queues with a data folder): two pumps at once, each looping
 * on `claim-many` with `waitMs` 10000 and `limit` 10, pausing 50 ms after an empty claim,
 * handling the batches it got concurrently, and failing a batch whose handler threw with
 * `retryable: true` and no delay. Here every batch's first attempt throws: each must come back
 * after the backoff (same id, items, compiledContent), then complete, in its chat's order,
 * with no 5xx answered to either pump.
 */
import { describe, expect, it } from '@jest/globals';
import { getBatch } from '../../../functions/store/dispatch/batches.js';
import { dispatchApi, sleep } from './support.js';
import { newLedger, pump, serverErrors, until } from './workers.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const { d } = dispatchApi(config, { drainAfterEach: false });

describe(
  'OpenClaw-style pumps (claim-many, waitMs 10 s, limit 10, 50 ms idle pause, retryable fail without ' + 'delay)',
  () => {
    it(
      'two pumps: every batch fails once, comes back after the backoff, and completes; every message ends once, in ' +
        'order, with no 5xx',
      async () => {
        const ledger = newLedger();
        let stop = false;
        const pumps = ['pump-a', 'pump-b'].map((workerId) =>
          pump(d, ledger, {
            workerId,
            limit: 10,
            waitMs: 10_000,
            idlePauseMs: 50,
            maxAttempts: 8,
            decide: (_batch, attempt) => (attempt === 1 ? 'retry' : 'complete'),
            stopped: () => stop,
          }),
        );

        // 8 chats; a message each, then two more in a burst a little later (batched after the debounce).
        const chats = await Promise.all(Array.from({ length: 8 }, () => d.newChat()));
        const sent = new Map<string, string[]>(chats.map((c) => [c.id as string, []]));
        for (const c of chats) sent.get(c.id)!.push(await d.say(c.id, `first in ${c.id}`));
        // Kept (time is the behavior): the next messages come after the first batch's debounce.
        await sleep(1500);
        for (const c of chats) {
          sent.get(c.id)!.push(await d.say(c.id, 'second'));
          sent.get(c.id)!.push(await d.say(c.id, 'third'));
        }
        const all = [...sent.values()].flat();
        const completedIds = () =>
          [...ledger.ends.entries()]
            .filter(([, ends]) => ends.includes('completed'))
            .flatMap(([id]) => ledger.claims.get(id)![0]!.items.map((i) => i.sourceId));
        const finished = await until(() => completedIds().length >= all.length, 60_000);
        stop = true;
        await Promise.all(pumps);

        expect(serverErrors(ledger)).toEqual([]);
        expect(finished).toBe(true);
        // Every message in exactly one batch, and that batch completed once.
        expect(completedIds().sort()).toEqual([...all].sort());
        for (const [batchId, claims] of ledger.claims) {
          // Failed once, came back once with the very same payload.
          expect([batchId, claims.length, ledger.ends.get(batchId)]).toEqual([batchId, 2, ['completed']]);
          expect(claims[1]).toEqual(claims[0]);
          expect(await getBatch(batchId)).toMatchObject({
            status: 'completed',
            attempt_count: 2,
            last_error: 'attempt 1 failed',
          });
        }
        // Per chat: batches in the order of their messages, each leased only after the previous one ended.
        for (const [chatId, ids] of sent) {
          const headers = await Promise.all(
            [...ledger.claims.entries()]
              .filter(([, c]) => c[0]!.chatId === chatId)
              .map(async ([id]) => (await getBatch(id))!),
          );
          headers.sort((a, b) => a.chat_seq - b.chat_seq);
          const items = headers.flatMap((h) => ledger.claims.get(h.id)![0]!.items.map((i) => i.sourceId));
          expect([chatId, items]).toEqual([chatId, ids]);
          for (let k = 1; k < headers.length; k++)
            expect(headers[k]!.started_at! >= headers[k - 1]!.completed_at!).toBe(true);
        }
      },
      120_000,
    );
  },
);
