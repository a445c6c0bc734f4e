/**
 * The long-poll seconds of a claim (core/dispatch/claim.ts longPollSeconds): SQS waits in whole
 * seconds; a claim rounds up when that overshoots its deadline by at most half a second.
 */
import { describe, expect, it } from '@jest/globals';
import { CLAIM_OVERSHOOT_MS, longPollSeconds } from '../../functions/core/dispatch/claim.js';

describe('longPollSeconds', () => {
  it('makes the usual 10 s wait one receive (9.99 s left by the first one → 10 s)', () => {
    expect(longPollSeconds(9_990)).toBe(10);
    expect(longPollSeconds(10_000)).toBe(10);
    expect(longPollSeconds(9_500)).toBe(10);
  });

  it('rounds down when rounding up would overshoot by more than half a second', () => {
    expect(CLAIM_OVERSHOOT_MS).toBe(500);
    expect(longPollSeconds(9_499)).toBe(9);
    expect(longPollSeconds(1_400)).toBe(1);
  });

  it('waits none under a second, and at most SQS’s 20 s', () => {
    expect(longPollSeconds(999)).toBe(0);
    expect(longPollSeconds(0)).toBe(0);
    expect(longPollSeconds(-5)).toBe(0);
    expect(longPollSeconds(1_000)).toBe(1);
    expect(longPollSeconds(19_700)).toBe(20);
    expect(longPollSeconds(25_000)).toBe(20);
  });
});
