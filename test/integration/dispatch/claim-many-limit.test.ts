/**
 * claim-many above SQS's 10 messages per receive (contract §4.4.7, §5.11.2): with claimManyLimit
 * over 10, one claim returns every claimable batch up to the effective limit, min(50,
 * claimManyLimit), not the first receive's 10.
 */
import { describe, expect, it } from '@jest/globals';
import { LONG_BATCHING, QUICK_RETRIES, configWith, dispatchApi } from './support.js';

const config = configWith({ mode: 'immediate', ...LONG_BATCHING, ...QUICK_RETRIES, claim: { claimManyLimit: 100 } });

const { d } = dispatchApi(config);

describe('claim-many with claimManyLimit over 10', () => {
  it('returns all 27 claimable batches in one claim, then up to 50 (the cap) of 60', async () => {
    const chat = await d.newChat();
    const sent: string[] = [];
    for (let i = 0; i < 27; i++) sent.push(await d.say(chat.id, `m${i}`));
    const first = await d.claimMany({ workerId: 'w1', waitMs: 2000, limit: 100 });
    expect(first.status).toBe(200);
    const items = (first.body.batches as { items: { sourceId: string }[] }[]).flatMap((b) =>
      b.items.map((i) => i.sourceId),
    );
    expect(items.sort()).toEqual([...sent].sort());
    // Ended, so none of them comes back when its lease runs out (30 s) while the next 60 are written
    // on a loaded machine: the claims below count only the new inputs.
    for (const batch of first.body.batches) await d.completeOk(batch.batchId, 'w1');

    for (let i = 0; i < 60; i++) await d.say(chat.id, `n${i}`);
    const capped = await d.claimMany({ workerId: 'w2', waitMs: 2000, limit: 100 });
    expect(capped.body.batches).toHaveLength(50);
    for (const batch of capped.body.batches) await d.completeOk(batch.batchId, 'w2');
    // The other 10, each once. Claimed until all are in (not in one claim: a batch whose lease or
    // give-back the capped claim could not write in time, as under a full run's load, stays hidden
    // until its 30 s lease runs out, and a claim answers with what is there).
    const rest: string[] = [];
    const end = Date.now() + 45_000;
    while (rest.length < 10 && Date.now() < end) {
      const more = await d.claimMany({ workerId: 'w3', waitMs: 2000 });
      for (const batch of more.status === 200 ? more.body.batches : []) {
        rest.push(...batch.items.map((i) => i.content));
        await d.completeOk(batch.batchId, 'w3');
      }
    }
    const capItems = capped.body.batches.flatMap((b) => b.items.map((i) => i.content));
    expect([...capItems, ...rest].sort()).toEqual(Array.from({ length: 60 }, (_, i) => `n${i}`).sort());
  }, 90_000);
});
