/**
 * Numbers and strings at the edges of the dispatch routes (issue 17, finding 4): the contract sets
 * no maximum on leaseMs, extendMs and retryDelayMs, but the queue hides a message for at most
 * 12 hours; a larger value is capped there instead of failing the queue call after the table
 * decided (which answered 500 and stranded the batch). A workerId is at most 1,000 characters.
 */
import { describe, expect, it } from '@jest/globals';
import { getBatch } from '../../../functions/store/dispatch/batches.js';
import { MAX_HIDE_MS } from '../../../functions/core/dispatch/limits.js';
import { configWith, dispatchApi, LONG_BATCHING } from './support.js';

const { api, d } = dispatchApi(configWith({ mode: 'immediate', ...LONG_BATCHING }));
const HUGE = Number.MAX_SAFE_INTEGER;

describe('dispatch limits', () => {
  it('caps a huge lease, extension and retry delay at 12 hours: no 500, nothing stranded', async () => {
    const { batch } = await d.claimNewMessage('edge of time', { workerId: 'w', leaseMs: HUGE, waitMs: 5000 });
    const leased = (await getBatch(batch.batchId))!;
    const now = Date.now();
    expect(leased.status).toBe('leased');
    expect(Number(leased.lease_expires_at) - now).toBeLessThanOrEqual(MAX_HIDE_MS);
    expect(Number(leased.lease_expires_at) - now).toBeGreaterThan(MAX_HIDE_MS - 60_000);
    expect((await d.heartbeat(batch.batchId, { workerId: 'w', extendMs: HUGE })).status).toBeLessThan(300);
    const failed = await d.fail(batch.batchId, { workerId: 'w', reason: 'later', retryable: true, retryDelayMs: HUGE });
    expect(failed.status).toBeLessThan(300);
    const retried = (await getBatch(batch.batchId))!;
    expect(retried.attempt_count).toBe(1);
    expect(retried.status).not.toBe('leased');
    // Not due again for 12 hours: nothing to claim now.
    await d.claimNone({ workerId: 'w', waitMs: 0 });
  });

  it('refuses a workerId over 1,000 characters with a schema error, on every dispatch route', async () => {
    const long = 'w'.repeat(1001);
    for (const res of [
      await api.post('/api/v1/dispatch/claim', { workerId: long }),
      await api.post('/api/v1/dispatch/claim-many', { workerId: long }),
      await api.post('/api/v1/dispatch/AAAAAAAAAAAAAAAAAAAAA/heartbeat', { workerId: long }),
      await api.post('/api/v1/dispatch/AAAAAAAAAAAAAAAAAAAAA/complete', { workerId: long }),
      await api.post('/api/v1/dispatch/AAAAAAAAAAAAAAAAAAAAA/fail', { workerId: long, reason: 'x' }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.error.details.fieldErrors.workerId).toBeDefined();
    }
    expect((await api.post('/api/v1/dispatch/claim', { workerId: 'w'.repeat(1000), waitMs: 0 })).status).toBe(204);
  });
});
