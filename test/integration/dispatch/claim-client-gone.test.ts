/**
 * A claim whose client goes away during its long-poll claims nothing (contract §4.4.7). The local
 * runtime tells a handler its client left (functions/platform/client-gone.ts); behind API Gateway
 * a function never learns it, so on AWS such a claim may still lease a batch, which comes back
 * when its lease runs out, as for a worker that died (docs/divergences.md). Hence on the sources
 * only (SOURCE_ONLY in test/rehearsal/suite.js).
 */
import { describe, expect, it } from '@jest/globals';
import { QUICK_RETRIES, configWith, dispatchApi, sleep } from './support.js';

const config = configWith({
  mode: 'sequential',
  leaseMs: 30_000,
  claimWaitMs: 1500,
  ...QUICK_RETRIES,
  maxAttempts: 2,
  claim: { claimManyLimit: 3 },
});

const { api, d } = dispatchApi(config);

describe('client disconnect', () => {
  it('a claim whose client went away during the wait claims nothing (§4.4.7)', async () => {
    const chat = await d.newChat();
    const controller = new AbortController();
    const startedAt = Date.now();
    const gone = fetch(`${api.url}/api/v1/dispatch/claim`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ workerId: 'gone', waitMs: 5000, leaseMs: 4000 }),
      signal: controller.signal,
    }).catch(() => undefined);
    // Kept (time is the behavior): the claim waits, then its client leaves.
    await sleep(500);
    controller.abort();
    await gone;
    // Kept (time is the behavior): the abandoned wait ends on the server.
    await sleep(300);
    const id = await d.say(chat.id, 'for a live worker');
    // The batch goes to a worker that is still there, not to the one that left.
    const res = await d.claim({ workerId: 'w1', waitMs: 2000 });
    try {
      expect(res.status).toBe(200);
      expect(res.body.items.map((i) => i.sourceId)).toEqual([id]);
    } finally {
      if (res.status === 200) await d.completeOk(res.body.batchId, 'w1');
      // Whatever the abandoned claim took comes back after its lease.
      else await d.drain(6000);
      // Let an abandoned claim that is still waiting run out before the next test.
      // Kept (time is the behavior): past the abandoned claim's wait (5 s).
      await sleep(Math.max(0, startedAt + 5500 - Date.now()));
    }
  }, 20_000);
});
