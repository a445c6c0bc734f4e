/** The write bell (platform/write-bell.ts): a waiting reader wakes at a write, or at its timer. */
import { describe, expect, it } from '@jest/globals';
import { ringWriteBell, sleepUntilWrite, writeBellCount } from '../../functions/platform/write-bell.js';

describe('write bell', () => {
  it('ends every wait at the next ring', async () => {
    const started = Date.now();
    const waits = [sleepUntilWrite(10_000), sleepUntilWrite(10_000)];
    setTimeout(ringWriteBell, 20); // the ring under test, a moment after the waits begin
    await Promise.all(waits);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('ends a wait at its timer when nothing rings, and a later ring finds no stale waiter', async () => {
    const started = Date.now();
    await sleepUntilWrite(60);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    ringWriteBell(); // nothing waits: no effect, no error
    let woken = false;
    const wait = sleepUntilWrite(10_000).then(() => (woken = true));
    await new Promise((r) => setTimeout(r, 30)); // kept: an absence (not woken without a ring)
    expect(woken).toBe(false);
    ringWriteBell();
    await wait;
    expect(woken).toBe(true);
  });

  it('a ring while the reader was busy (after its count, before its wait) ends the wait at once', async () => {
    const seen = writeBellCount();
    ringWriteBell(); // a write lands while the reader is reading
    expect(writeBellCount()).toBe(seen + 1);
    const started = Date.now();
    await sleepUntilWrite(10_000, seen);
    expect(Date.now() - started).toBeLessThan(1000);
    // With the current count, the same wait runs to its timer.
    const again = Date.now();
    await sleepUntilWrite(60, writeBellCount());
    expect(Date.now() - again).toBeGreaterThanOrEqual(55);
  });

  it('an abort ends a wait (a stopping reader keeps no timer), and an aborted signal waits not at all', async () => {
    const stopping = new AbortController();
    const started = Date.now();
    const wait = sleepUntilWrite(10_000, writeBellCount(), stopping.signal);
    setTimeout(() => stopping.abort(), 20);
    await wait;
    expect(Date.now() - started).toBeLessThan(5_000);
    const again = Date.now();
    await sleepUntilWrite(10_000, undefined, stopping.signal);
    expect(Date.now() - again).toBeLessThan(1000);
  });
});
