/**
 * The timing rules of dispatch with a fake clock (functions/core/dispatch/seal.ts and settle.ts), so the
 * integration tests need only one real-time case per rule:
 * - `sealingDecision`: §4.4.3 (debounce, typing grace, typing before the window, max wait);
 * - `flush`: the flush consumer's loop around it: rule 2 (no sealing while the chat's batch is
 *   leased), the modes that seal at once, and how long it waits (a queue delay over a second,
 *   a sleep under it). The table and the queues are replaced by stand-ins that record calls;
 *   a seal shows as a read of the chat's unsealed inputs;
 * - `retryDelay`: §4.4.5.
 */
import { beforeEach, describe, expect, it, jest } from '@jest/globals';
import { defaultConfig } from '../../functions/platform/instance-config.js';
import type { InstanceConfig } from '../../functions/platform/instance-config.js';
import type { BatchRecord } from '../../functions/store/dispatch/batches.js';
import type { DispatchState } from '../../functions/store/dispatch/state.js';

type Call =
  | { op: 'sendFlush'; chatId: string; delayMs: number }
  | { op: 'sleep'; ms: number }
  | { op: 'seal'; at: number }
  | { op: 'getBatch'; batchId: string };

/** What the stand-in table holds, and what the code under test did, in order. */
let state: DispatchState = {};
let batches: Record<string, BatchRecord> = {};
let now = 0;
let calls: Call[] = [];

jest.unstable_mockModule('../../functions/store/dispatch/state.js', () => ({
  getState: async () => ({ ...state }),
  clearPendingMark: async () => undefined,
  // Imported by name by modules the code under test loads; never called here.
  recordUserTyping: () => ({}),
}));
jest.unstable_mockModule('../../functions/store/dispatch/batches.js', () => ({
  getBatch: async (batchId: string) => {
    calls.push({ op: 'getBatch', batchId });
    return batches[batchId];
  },
}));
jest.unstable_mockModule('../../functions/store/dispatch/inputs.js', () => ({
  // A seal starts by reading the chat's unsealed inputs; with none it only tidies up.
  unsealedInputs: async () => {
    calls.push({ op: 'seal', at: now });
    return [];
  },
  releaseTaken: async () => undefined,
  // Imported by name by modules the code under test loads; never called here.
  dispatchInputWrites: () => [],
}));
jest.unstable_mockModule('../../functions/store/dispatch/batch-refs.js', () => ({
  batchRef: async () => undefined,
  markSent: async () => false,
}));
jest.unstable_mockModule('../../functions/platform/queues.js', () => ({
  sendFlush: async (chatId: string, delayMs: number) => {
    calls.push({ op: 'sendFlush', chatId, delayMs });
  },
  dispatchConfigured: () => true,
}));

const { flush, sealingDecision } = await import('../../functions/core/dispatch/seal.js');
const { retryDelay } = await import('../../functions/core/dispatch/settle.js');

type DispatchSettings = InstanceConfig['server']['dispatch'];

const DEBOUNCE = 1000;
const GRACE = 3000;
const MAX_WAIT = 10_000;
const T = Date.parse('2026-11-23T12:00:00.000Z');
/** The ISO time `ms` after T (the form the dispatch state stores). */
const at = (ms: number) => new Date(T + ms).toISOString();

const settings = (over: Partial<DispatchSettings> = {}): DispatchSettings => ({
  ...defaultConfig().server.dispatch,
  mode: 'batched_sequential',
  batchDebounceMs: DEBOUNCE,
  typingGraceMs: GRACE,
  maxBatchWaitMs: MAX_WAIT,
  ...over,
});
const d = settings();

/**
 * A window of unsealed inputs, the first at T + `first` and the newest at T + `last`, optionally with typing
 * at T + `typing`.
 */
const windowOf = (first: number, last: number, typing?: number, inputs = 2): DispatchState => ({
  pending_inputs: inputs,
  first_pending_at: at(first),
  last_input_at: at(last),
  ...(typing === undefined ? {} : { last_user_typing_at: at(typing) }),
});

const decide = (s: DispatchState, nowAfterT: number, dispatch: DispatchSettings = d) =>
  sealingDecision(dispatch, s, T + nowAfterT);
const waitUntil = (msAfterT: number) => ({ seal: false, wakeAt: T + msAfterT });
const SEAL = { seal: true };

describe('sealingDecision (§4.4.3)', () => {
  it('does nothing without unsealed inputs, whatever the timestamps say', () => {
    expect(decide({}, 60_000)).toEqual({ seal: false });
    // A window left behind by the last seal, and a stale typing signal: nothing to seal.
    expect(
      decide({ pending_inputs: 0, first_pending_at: at(0), last_input_at: at(0), last_user_typing_at: at(0) }, 60_000),
    ).toEqual({ seal: false });
    expect(decide({ last_user_typing_at: at(0) }, 100)).toEqual({ seal: false });
  });

  it('waits for the debounce after the newest input, and seals from the moment it has passed', () => {
    const one = windowOf(0, 0, undefined, 1);
    expect(decide(one, 0)).toEqual(waitUntil(DEBOUNCE));
    expect(decide(one, 400)).toEqual(waitUntil(DEBOUNCE));
    expect(decide(one, DEBOUNCE - 1)).toEqual(waitUntil(DEBOUNCE));
    expect(decide(one, DEBOUNCE)).toEqual(SEAL);
    expect(decide(one, DEBOUNCE + 5000)).toEqual(SEAL);
  });

  it('counts the debounce from the newest input, not the first', () => {
    const s = windowOf(0, 700);
    expect(decide(s, DEBOUNCE)).toEqual(waitUntil(700 + DEBOUNCE));
    expect(decide(s, 700 + DEBOUNCE)).toEqual(SEAL);
  });

  it('typing after the first input holds the batch until the typing grace has passed', () => {
    const s = windowOf(0, 0, 300);
    // Debounce over, grace not: wait for the grace.
    expect(decide(s, DEBOUNCE)).toEqual(waitUntil(300 + GRACE));
    expect(decide(s, 300 + GRACE - 1)).toEqual(waitUntil(300 + GRACE));
    expect(decide(s, 300 + GRACE)).toEqual(SEAL);
  });

  it('the grace runs from the last typing signal: a later one restarts it', () => {
    // The state keeps the newest signal only: typing at 200, then again at 1700.
    const s = windowOf(0, 0, 1700);
    expect(decide(s, 200 + GRACE)).toEqual(waitUntil(1700 + GRACE));
    expect(decide(s, 1700 + GRACE)).toEqual(SEAL);
  });

  it('when both hold the batch, it waits for the later of the debounce and the grace', () => {
    // Grace ends at 3100, the newest input's debounce at 3800.
    expect(decide(windowOf(0, 2800, 100), 3000)).toEqual(waitUntil(3800));
    expect(decide(windowOf(0, 2800, 100), 3800)).toEqual(SEAL);
    // Grace ends at 3500, the debounce at 1200.
    expect(decide(windowOf(0, 200, 500), 1200)).toEqual(waitUntil(3500));
  });

  it('typing older than the grace no longer holds the batch', () => {
    // Typed at 100 (grace over at 3100); another input at 2500 has its own debounce to 3500.
    const s = windowOf(0, 2500, 100);
    expect(decide(s, 3200)).toEqual(waitUntil(3500));
    expect(decide(s, 3500)).toEqual(SEAL);
  });

  it('ignores typing at or before the first unsealed input', () => {
    for (const typing of [-500, 0]) {
      const s = windowOf(0, 0, typing);
      expect(decide(s, 200)).toEqual(waitUntil(DEBOUNCE));
      expect(decide(s, DEBOUNCE)).toEqual(SEAL);
    }
    // One millisecond after the first input counts.
    expect(decide(windowOf(0, 0, 1), DEBOUNCE)).toEqual(waitUntil(1 + GRACE));
  });

  it('the max wait from the first input caps the wait while the user keeps typing', () => {
    // Typing at 9000 would hold until 12 000; the max wait ends at 10 000.
    expect(decide(windowOf(0, 0, 9000), 9500)).toEqual(waitUntil(MAX_WAIT));
    // Still typing right up to the max wait: sealed anyway.
    expect(decide(windowOf(0, 0, MAX_WAIT - 1), MAX_WAIT)).toEqual(SEAL);
    expect(decide(windowOf(0, 0, MAX_WAIT), MAX_WAIT)).toEqual(SEAL);
    expect(decide(windowOf(0, 0, MAX_WAIT - 1), MAX_WAIT - 1)).toEqual(waitUntil(MAX_WAIT));
  });

  it('the max wait caps the wait while inputs keep arriving faster than the debounce', () => {
    expect(decide(windowOf(0, 9800, undefined, 40), 9900)).toEqual(waitUntil(MAX_WAIT));
    expect(decide(windowOf(0, 9999, undefined, 41), MAX_WAIT)).toEqual(SEAL);
    // Both at once.
    expect(decide(windowOf(0, 9999, 9999, 41), MAX_WAIT)).toEqual(SEAL);
  });

  it('the max wait counts from the first input of the current window', () => {
    // A window that opened at 20 000 (an earlier one was sealed) waits its own debounce.
    expect(decide(windowOf(20_000, 20_000), 20_500)).toEqual(waitUntil(20_000 + DEBOUNCE));
    expect(decide(windowOf(20_000, 29_900, 29_900), 30_000)).toEqual(SEAL);
    expect(decide(windowOf(20_000, 29_500, 29_900), 29_999)).toEqual(waitUntil(30_000));
  });

  it('uses the configured settings (contract defaults: 600 ms debounce, 2000 ms grace, 30 s max wait)', () => {
    const defaults = defaultConfig().server.dispatch;
    expect(decide(windowOf(0, 0, 100), 600, defaults)).toEqual(waitUntil(2100));
    expect(decide(windowOf(0, 0, 100), 2100, defaults)).toEqual(SEAL);
    expect(decide(windowOf(0, 29_000, 29_000), 29_999, defaults)).toEqual(waitUntil(30_000));
    expect(decide(windowOf(0, 0), 600, defaults)).toEqual(SEAL);
  });
});

describe('retryDelay (§4.4.5)', () => {
  it('doubles from retryBaseMs per counted attempt up to retryMaxMs (the contract defaults give its table)', () => {
    const defaults = defaultConfig().server.dispatch;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => retryDelay(defaults, n))).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000,
    ]);
    expect([1, 2, 3, 4].map((n) => retryDelay({ retryBaseMs: 200, retryMaxMs: 1000 }, n))).toEqual([
      200, 400, 800, 1000,
    ]);
  });

  it('stays at retryMaxMs however many attempts, and a base above the max gives the max', () => {
    expect(retryDelay({ retryBaseMs: 500, retryMaxMs: 30_000 }, 60)).toBe(30_000);
    expect(retryDelay({ retryBaseMs: 500, retryMaxMs: 30_000 }, 5000)).toBe(30_000);
    expect(retryDelay({ retryBaseMs: 5000, retryMaxMs: 1000 }, 1)).toBe(1000);
    expect(retryDelay({ retryBaseMs: 0, retryMaxMs: 1000 }, 3)).toBe(0);
  });

  it("takes the worker's retryDelayMs when given, 0 included, above the max included", () => {
    const defaults = defaultConfig().server.dispatch;
    expect(retryDelay(defaults, 3, 0)).toBe(0);
    expect(retryDelay(defaults, 1, 2500)).toBe(2500);
    expect(retryDelay(defaults, 8, 120_000)).toBe(120_000);
    expect(retryDelay(defaults, 3, undefined)).toBe(2000);
  });
});

describe('flush: the consumer of a chat signal, with a fake clock', () => {
  const CHAT = 'chat0000000000000000a';
  const LEASED = 'batch000000000000000l';
  const config = (over: Partial<DispatchSettings> = {}): InstanceConfig => {
    const c = defaultConfig();
    return { ...c, server: { ...c.server, dispatch: settings(over) } };
  };
  /** The fake clock: `sleep` moves it on, and both are recorded. */
  const deps = {
    clock: () => new Date(now),
    newId: () => 'unused000000000000000',
    sleep: async (ms: number) => {
      calls.push({ op: 'sleep', ms });
      now += ms;
    },
  };
  const run = async (nowAfterT: number, mode: DispatchSettings['mode'] = 'batched_sequential') => {
    now = T + nowAfterT;
    await flush(config({ mode }), CHAT, deps);
    return calls.filter((c) => c.op !== 'getBatch');
  };
  const leasedBatch = (leaseEndsAfterT: number | undefined, status: BatchRecord['status'] = 'leased'): BatchRecord => ({
    id: LEASED,
    chat_id: CHAT,
    kind: 'user_batch',
    status,
    chat_seq: 1,
    attempt_count: 1,
    ...(leaseEndsAfterT === undefined ? {} : { lease_owner: 'w1', lease_expires_at: T + leaseEndsAfterT }),
    available_at: T,
    created_at: at(0),
    item_count: 1,
    part_count: 1,
    payload_bytes: 100,
  });

  beforeEach(() => {
    state = {};
    batches = {};
    calls = [];
  });

  it('returns without a seal or a new signal when nothing is pending', async () => {
    state = { leased_batch_id: LEASED, last_user_typing_at: at(0) };
    batches = { [LEASED]: leasedBatch(60_000) };
    expect(await run(5000)).toEqual([]);
    // A chat with nothing pending does not even look at its leased batch.
    expect(calls).toEqual([]);
  });

  it('seals once the debounce has passed', async () => {
    state = windowOf(0, 0);
    expect(await run(DEBOUNCE)).toEqual([{ op: 'seal', at: T + DEBOUNCE }]);
  });

  it('re-signals itself through the queue for the exact remaining wait when it is over a second', async () => {
    state = windowOf(0, 0, 300);
    // Grace ends at 3300.
    expect(await run(DEBOUNCE)).toEqual([{ op: 'sendFlush', chatId: CHAT, delayMs: 2300 }]);
    calls = [];
    state = windowOf(0, 9500, 9500);
    // The max wait (10 000) comes before the typing grace and the debounce.
    expect(await run(8000)).toEqual([{ op: 'sendFlush', chatId: CHAT, delayMs: 2000 }]);
  });

  it('sleeps out a wait of a second or less (the queue delays whole seconds), then seals', async () => {
    state = windowOf(0, 0);
    expect(await run(400)).toEqual([
      { op: 'sleep', ms: 600 + 5 },
      { op: 'seal', at: T + DEBOUNCE + 5 },
    ]);
    calls = [];
    // Exactly one second: still slept here.
    expect(await run(0)).toEqual([
      { op: 'sleep', ms: 1000 + 5 },
      { op: 'seal', at: T + DEBOUNCE + 5 },
    ]);
    calls = [];
    // A millisecond more: the queue's delay (whole seconds) comes first, and this signal ends.
    state = windowOf(100, 100);
    expect(await run(99)).toEqual([{ op: 'sendFlush', chatId: CHAT, delayMs: 1001 }]);
  });

  it(
    'rule 2: does not seal while the chat has an unexpired leased batch, and looks again just after the lease ' +
      'ends',
    async () => {
      // Debounce and grace long over, max wait too: the lease still wins.
      state = { ...windowOf(0, 0, 100), leased_batch_id: LEASED };
      batches = { [LEASED]: leasedBatch(30_000) };
      expect(await run(MAX_WAIT + 1000)).toEqual([
        { op: 'sendFlush', chatId: CHAT, delayMs: 30_000 - (MAX_WAIT + 1000) + 50 },
      ]);
      expect(calls).toContainEqual({ op: 'getBatch', batchId: LEASED });
    },
  );

  it('rule 2: a lease ending within a second is slept out, and the inputs are sealed right after it', async () => {
    state = { ...windowOf(0, 0), leased_batch_id: LEASED };
    batches = { [LEASED]: leasedBatch(5000) };
    expect(await run(4400)).toEqual([
      { op: 'sleep', ms: 600 + 50 },
      { op: 'seal', at: T + 5050 },
    ]);
  });

  it('rule 2: after the lease ends the ordinary rules apply again', async () => {
    // The lease ended at 5000; the newest input's debounce runs to 5500.
    state = { ...windowOf(0, 4500), leased_batch_id: LEASED };
    batches = { [LEASED]: leasedBatch(5000) };
    expect(await run(4900)).toEqual([
      { op: 'sleep', ms: 100 + 50 },
      { op: 'sleep', ms: 5500 - 5050 + 5 },
      { op: 'seal', at: T + 5505 },
    ]);
  });

  it(
    'an expired lease does not hold the inputs back, even before the sweeper or a claim has returned the ' + 'batch',
    async () => {
      state = { ...windowOf(0, 0), leased_batch_id: LEASED };
      // Still `leased` in the table, but its lease ran out (lease_expires_at ≤ now is expired, §4.4.4).
      for (const leaseEnd of [500, DEBOUNCE]) {
        calls = [];
        batches = { [LEASED]: leasedBatch(leaseEnd) };
        expect(await run(DEBOUNCE)).toEqual([{ op: 'seal', at: T + DEBOUNCE }]);
      }
    },
  );

  it(
    'a leased batch that ended (completed, failed, back to pending) or is gone does not hold the inputs ' + 'back',
    async () => {
      state = { ...windowOf(0, 0), leased_batch_id: LEASED };
      for (const status of ['completed', 'failed', 'pending'] as const) {
        calls = [];
        batches = { [LEASED]: leasedBatch(status === 'pending' ? undefined : 60_000, status) };
        expect(await run(DEBOUNCE)).toEqual([{ op: 'seal', at: T + DEBOUNCE }]);
      }
      calls = [];
      batches = {};
      expect(await run(DEBOUNCE)).toEqual([{ op: 'seal', at: T + DEBOUNCE }]);
    },
  );

  it('immediate and sequential modes seal at once: typing, the timing settings and leases have no effect', async () => {
    for (const mode of ['immediate', 'sequential'] as const) {
      calls = [];
      state = { ...windowOf(0, 0, 0), leased_batch_id: LEASED };
      batches = { [LEASED]: leasedBatch(60_000) };
      expect(await run(1, mode)).toEqual([{ op: 'seal', at: T + 1 }]);
      expect(calls).not.toContainEqual({ op: 'getBatch', batchId: LEASED });
    }
  });
});
