/**
 * Waits for an observable value to become what a test expects (jest has no `expect.poll`): reads
 * it again every `intervalMs` until it deep-equals `expected`, and fails with the last value read
 * once `timeoutMs` has passed. For values the page changes on its own (progress, media loading).
 */
import { expect } from '@jest/globals';
import { isDeepStrictEqual } from 'node:util';

export async function eventually<T>(
  read: () => Promise<T>,
  expected: T,
  { timeoutMs = 15_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!isDeepStrictEqual(last, expected) && Date.now() < deadline) {
    await new Promise((ok) => setTimeout(ok, intervalMs));
    last = await read();
  }
  expect(last).toEqual(expected);
}
