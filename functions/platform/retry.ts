/**
 * The one way this code waits and tries again. Every retry loop names its policy at the call:
 * how many tries, for how long, how long to wait between them, and what is worth another try.
 */

/** Resolves after `ms` milliseconds (0 or less: on the next turn of the event loop). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Waits between tries: given how many tries were made (1 after the first), the pause in ms. */
export type Backoff = (tries: number) => number;

export const backoff = {
  /** Uniform in [0, min(capMs, baseMs·2^(tries−1))): spreads writers that collided (AWS "full jitter"). */
  fullJitter:
    (baseMs: number, capMs = Infinity): Backoff =>
    (tries) =>
      Math.random() * Math.min(capMs, baseMs * 2 ** (tries - 1)),
  /** baseMs·2^(tries−1), ±25 %: a remote service that is struggling is not hit in lockstep. */
  exponential:
    (baseMs: number, capMs = Infinity): Backoff =>
    (tries) =>
      Math.min(capMs, baseMs * 2 ** (tries - 1)) * (0.75 + Math.random() / 2),
  /** Uniform in [0, ms): a short pause before trying again on fresh data. */
  upTo:
    (ms: number): Backoff =>
    () =>
      Math.random() * ms,
};

export interface RetryPolicy<T = unknown> {
  /** Tries at most, the first included (Infinity: only `budgetMs` or `mayRetry` ends them). */
  attempts: number;
  /** No try starts once this long has passed since the first one. */
  budgetMs?: number;
  /** The pause before each retry. */
  backoff: Backoff;
  /** Whether a thrown error is worth another try; any other error is thrown as it is at once. */
  retryable?: (error: unknown) => boolean;
  /** Whether a returned result is worth another try (a remote answer such as 503). */
  retryResult?: (result: T) => boolean;
  /** Asked before each retry (for example: is there still time for a write in this invocation?). */
  mayRetry?: () => boolean;
  /**
   * What ends the tries when they run out on an error: the error to throw (default: the last
   * error itself). When they run out on a result, the last result is returned.
   */
  exhausted?: (last: unknown) => unknown;
  /** Replaces `sleep` (tests, and deps that inject a clock). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Runs `attempt` (given its 1-based number) until it succeeds, or its failure is not retryable,
 * or the policy's tries, budget or `mayRetry` run out.
 */
export async function retry<T>(policy: RetryPolicy<T>, attempt: (n: number) => Promise<T>): Promise<T> {
  const started = Date.now();
  const pause = policy.sleep ?? sleep;
  const mayGoOn = (n: number): boolean =>
    n < policy.attempts &&
    (policy.budgetMs === undefined || Date.now() - started < policy.budgetMs) &&
    (policy.mayRetry?.() ?? true);
  for (let n = 1; ; n++) {
    let result: T;
    try {
      result = await attempt(n);
    } catch (error) {
      if (!(policy.retryable?.(error) ?? false)) throw error;
      if (!mayGoOn(n)) throw policy.exhausted ? policy.exhausted(error) : error;
      await pause(policy.backoff(n));
      continue;
    }
    if (!policy.retryResult?.(result) || !mayGoOn(n)) return result;
    await pause(policy.backoff(n));
  }
}
