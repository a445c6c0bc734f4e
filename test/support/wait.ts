/**
 * Waiting for something a test can observe (a row in the table, an answer of the API, a call a
 * fake received) instead of sleeping for a guessed time: `eventually` reads the value again every
 * `intervalMs` until `until` holds and answers the value that satisfied it, or fails with the
 * last value read once `timeoutMs` has passed. Without `until`, it waits for a read that does not
 * throw (a read with `expect`s inside). The one polling helper of the integration tests: the SSE
 * stream has its own (`SseConnection.waitFor`, support/sse.ts) for frames already received.
 */
import { sleep } from '../../functions/platform/retry.js';

export interface WaitOptions {
  /** How long to keep reading (10 s by default: generous, the machine may be loaded). */
  timeoutMs?: number;
  /** The pause between two reads. */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

export async function eventually<T>(
  read: () => T | Promise<T>,
  until: (value: T) => boolean = () => true,
  { timeoutMs = 10_000, intervalMs = 25, what = 'the condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    try {
      const value = await read();
      if (until(value)) return value;
      failure = new Error(`last value read: ${JSON.stringify(value)?.slice(0, 2000)}`);
    } catch (error) {
      failure = error;
    }
    if (Date.now() >= deadline) {
      const detail = failure instanceof Error ? failure.message : String(failure);
      throw new Error(`Waited ${timeoutMs} ms for ${what}; ${detail}`, { cause: failure });
    }
    await sleep(intervalMs);
  }
}

/**
 * Waits until the clock has moved past the current millisecond, so that the next write carries
 * a later timestamp than every write before it (updated_at grows; lists order by time). The
 * local runtime runs in this process and reads the same clock, so this is the event itself, not
 * a guess: at most a millisecond of real time.
 */
export async function laterMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() <= now) await sleep(1);
}
