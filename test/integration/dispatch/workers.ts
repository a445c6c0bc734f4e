/**
 * Worker loops as real agent plugins run them, over HTTP, for the pump and soak tests: every
 * response is recorded (a 5xx fails the test), every claim of a batch is an attempt, and
 * every batch's end (complete, or a terminal fail) is counted, so the tests can check that
 * each input ends in exactly one completed or terminally failed batch.
 */
import type { Batch, ClaimBody, dispatch } from './support.js';
import { sleep } from './support.js';
import type { Response } from '../../support/api.js';
import { eventually } from '../../support/wait.js';

export interface Ledger {
  /** Every status seen, by route. */
  statuses: { route: string; status: number; text: string }[];
  /** Per batch: each claim (the payload as received) and each end. */
  claims: Map<string, Batch[]>;
  ends: Map<string, ('completed' | 'failed')[]>;
  /**
   * Leases found lost (409) by a heartbeat, complete or fail, with how long after the claim's
   * response that request was sent (a worker too slow for its lease; the batch comes back).
   */
  lost: { batchId: string; route: string; afterMs: number }[];
}

export const newLedger = (): Ledger => ({ statuses: [], claims: new Map(), ends: new Map(), lost: [] });

export function serverErrors(ledger: Ledger): string[] {
  return ledger.statuses.filter((s) => s.status >= 500).map((s) => `${s.route} ${s.status} ${s.text}`);
}

export function record(ledger: Ledger, route: string, res: Response): Response {
  ledger.statuses.push({ route, status: res.status, text: res.status >= 500 ? res.text : '' });
  return res;
}

export type Action = 'complete' | 'retry' | 'terminal' | 'abandon';

export interface PumpOptions {
  workerId: string;
  /** claim-many with this limit, or plain claim when absent. */
  limit?: number;
  waitMs: number;
  leaseMs?: number;
  /** Pause after an empty claim (the OpenClaw plugin waits 50 ms). */
  idlePauseMs: number;
  /** What to do with a claimed batch (its attempt number given, 1-based). */
  decide: (batch: Batch, attempt: number) => Action;
  maxAttempts: number;
  stopped: () => boolean;
}

/**
 * One worker's pump: claim, handle every batch claimed (concurrently), repeat until stopped. Once
 * stopped, the worker leaves its idle claim's long-poll (the request is aborted, as a plugin that
 * shuts down does) rather than wait it out: the pump and soak tests stop only when every input
 * has ended, so that wait only idled (up to the pump's 10 s).
 */
export async function pump(d: ReturnType<typeof dispatch>, ledger: Ledger, o: PumpOptions): Promise<void> {
  const body: ClaimBody = { workerId: o.workerId, waitMs: o.waitMs, ...(o.leaseMs ? { leaseMs: o.leaseMs } : {}) };
  const leaving = new AbortController();
  const watch = setInterval(() => {
    if (o.stopped()) leaving.abort();
  }, 50);
  const claimed = async (): Promise<Batch[]> => {
    if (o.limit) {
      const res = record(
        ledger,
        'claim-many',
        await d.claimMany({ ...body, limit: o.limit }, { signal: leaving.signal }),
      );
      return res.status === 200 ? res.body.batches : [];
    }
    const res = record(ledger, 'claim', await d.claim(body, { signal: leaving.signal }));
    return res.status === 200 ? [res.body] : [];
  };
  try {
    while (!o.stopped()) {
      const batches = await claimed().catch((error: unknown) => {
        if (leaving.signal.aborted) return undefined;
        throw error;
      });
      if (batches === undefined) return;
      if (batches.length === 0) {
        // Kept (time is the behavior): an idle worker's pause between empty claims.
        await sleep(o.idlePauseMs);
        continue;
      }
      await Promise.all(batches.map((b) => handle(d, ledger, o, b)));
    }
  } finally {
    clearInterval(watch);
  }
}

async function handle(d: ReturnType<typeof dispatch>, ledger: Ledger, o: PumpOptions, batch: Batch): Promise<void> {
  const claimedAt = Date.now();
  const seen = ledger.claims.get(batch.batchId) ?? [];
  seen.push(batch);
  ledger.claims.set(batch.batchId, seen);
  const attempt = seen.length;
  const action = o.decide(batch, attempt);
  const end = (how: 'completed' | 'failed') =>
    ledger.ends.set(batch.batchId, [...(ledger.ends.get(batch.batchId) ?? []), how]);
  /** Sends a lease-holder request: true on 204; a 409 is a lost lease (recorded), anything else throws. */
  const call = async (route: string, send: () => Promise<Response>): Promise<boolean> => {
    const sentAt = Date.now();
    const res = record(ledger, route, await send());
    if (res.status === 204) return true;
    if (res.status === 409) {
      ledger.lost.push({ batchId: batch.batchId, route, afterMs: sentAt - claimedAt });
      return false;
    }
    throw new Error(`${route} ${batch.batchId} by ${o.workerId}: ${res.status} ${res.text}`);
  };
  switch (action) {
    case 'complete':
      if (
        attempt % 2 === 0 &&
        !(await call('heartbeat', () =>
          d.heartbeat(batch.batchId, { workerId: o.workerId, extendMs: o.leaseMs ?? 30_000 }),
        ))
      )
        return;
      if (await call('complete', () => d.complete(batch.batchId, o.workerId))) end('completed');
      return;
    case 'retry':
      // As the OpenClaw plugin fails a batch whose handler threw: retryable, no delay.
      if (
        (await call('fail', () =>
          d.fail(batch.batchId, { workerId: o.workerId, reason: `attempt ${attempt} failed`, retryable: true }),
        )) &&
        attempt >= o.maxAttempts
      ) {
        end('failed');
      }
      return;
    case 'terminal':
      if (
        await call('fail', () => d.fail(batch.batchId, { workerId: o.workerId, reason: 'gave up', retryable: false }))
      )
        end('failed');
      return;
    case 'abandon':
      // The worker crashed or hung: no heartbeat, no end. The lease runs out and the batch comes back.
      return;
  }
}

/** A small seeded PRNG, so a soak's choices are the same on every run. */
export { seeded } from '../../support/random.js';

/** Waits until `done()` or `ms` passes; returns whether it is done. */
export async function until(done: () => boolean, ms: number): Promise<boolean> {
  await eventually(done, Boolean, { timeoutMs: ms, intervalMs: 100 }).catch(() => undefined);
  return done();
}
