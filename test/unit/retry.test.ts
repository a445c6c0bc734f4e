/** The one retry helper (platform/retry.ts): tries, budget, backoff, retryable errors and results. */
import { describe, expect, it } from '@jest/globals';
import { backoff, retry } from '../../functions/platform/retry.js';
import type { RetryPolicy } from '../../functions/platform/retry.js';

class Flaky extends Error {}

/** A policy whose pauses are recorded instead of waited. */
function recorded<T>(policy: Omit<RetryPolicy<T>, 'sleep'>): { policy: RetryPolicy<T>; pauses: number[] } {
  const pauses: number[] = [];
  return { policy: { ...policy, sleep: async (ms) => void pauses.push(ms) }, pauses };
}

describe('retry', () => {
  it('returns the first success, pausing by the backoff between tries', async () => {
    const { policy, pauses } = recorded({
      attempts: 5,
      backoff: (n) => n * 100,
      retryable: (e) => e instanceof Flaky,
    });
    const seen: number[] = [];
    const out = await retry(policy, async (n) => {
      seen.push(n);
      if (n < 3) throw new Flaky();
      return 'done';
    });
    expect(out).toBe('done');
    expect(seen).toEqual([1, 2, 3]);
    expect(pauses).toEqual([100, 200]);
  });

  it('throws an error that is not retryable at once', async () => {
    const { policy, pauses } = recorded({ attempts: 5, backoff: () => 1, retryable: (e) => e instanceof Flaky });
    let tries = 0;
    const fatal = new Error('fatal');
    await expect(
      retry(policy, async () => {
        tries++;
        throw fatal;
      }),
    ).rejects.toBe(fatal);
    expect(tries).toBe(1);
    expect(pauses).toEqual([]);
  });

  it('stops after `attempts` tries with the exhausted error, or the last one', async () => {
    const last = new Flaky('last');
    let tries = 0;
    const failing = async () => {
      tries++;
      throw tries === 3 ? last : new Flaky();
    };
    const plain = recorded({ attempts: 3, backoff: () => 0, retryable: (e) => e instanceof Flaky });
    await expect(retry(plain.policy, failing)).rejects.toBe(last);
    expect(tries).toBe(3);
    tries = 0;
    const busy = new Error('busy');
    const mapped = recorded({ attempts: 3, backoff: () => 0, retryable: () => true, exhausted: () => busy });
    await expect(retry(mapped.policy, failing)).rejects.toBe(busy);
    expect(tries).toBe(3);
  });

  it('asks mayRetry before each retry, never before the first try', async () => {
    let allowed = 2;
    let tries = 0;
    const { policy } = recorded({
      attempts: Infinity,
      backoff: () => 0,
      retryable: () => true,
      mayRetry: () => allowed-- > 0,
      exhausted: () => new Error('out of time'),
    });
    await expect(
      retry(policy, async () => {
        tries++;
        throw new Flaky();
      }),
    ).rejects.toThrow('out of time');
    expect(tries).toBe(3);
  });

  it('starts no try once the budget is spent', async () => {
    let tries = 0;
    await expect(
      retry({ attempts: Infinity, budgetMs: 40, backoff: () => 25, retryable: () => true }, async () => {
        tries++;
        throw new Flaky();
      }),
    ).rejects.toBeInstanceOf(Flaky);
    // Tries at 0 and ~25 ms; the one at ~50 ms is past the budget.
    expect(tries).toBeGreaterThanOrEqual(2);
    expect(tries).toBeLessThanOrEqual(3);
  });

  it('retries a result the policy calls retryable, and returns the last one when the tries run out', async () => {
    const { policy, pauses } = recorded<number>({
      attempts: 4,
      backoff: () => 5,
      retryResult: (status) => status >= 500,
    });
    const answers = [503, 502, 200];
    expect(await retry(policy, async (n) => answers[n - 1]!)).toBe(200);
    expect(pauses).toEqual([5, 5]);
    let n = 0;
    expect(await retry(policy, async () => 500 + n++)).toBe(503);
    expect(n).toBe(4);
  });
});

describe('backoff', () => {
  it('full jitter stays below the doubled base and its cap', () => {
    const wait = backoff.fullJitter(20, 500);
    for (let tries = 1; tries <= 10; tries++) {
      for (let i = 0; i < 50; i++) {
        const ms = wait(tries);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(Math.min(500, 20 * 2 ** (tries - 1)));
      }
    }
  });

  it('exponential doubles within ±25 %', () => {
    const wait = backoff.exponential(100);
    for (let tries = 1; tries <= 5; tries++) {
      const ms = wait(tries);
      expect(ms).toBeGreaterThanOrEqual(75 * 2 ** (tries - 1));
      expect(ms).toBeLessThanOrEqual(125 * 2 ** (tries - 1));
    }
  });
});
