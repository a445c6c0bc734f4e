/**
 * Claims (contract §4.4.4, §4.4.7, §5.11.1-2): POST /dispatch/claim and claim-many.
 *
 * Claims long-poll the FIFO queue; the received message's visibility is the lease. The batch
 * header decides (lease.ts): lease checks, attempts, retry time and status are conditions on it,
 * never on the queue. Queue visibility is whole seconds: a message is hidden for the floor of a
 * lease or delay, and the claim that receives it up to a second early waits out the rest, so
 * leases and retry delays end within milliseconds of their time (§11).
 */
import type { InstanceConfig } from '../../platform/instance-config.js';
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import type { BatchRecord } from '../../store/dispatch/batches.js';
import * as Batches from '../../store/dispatch/batches.js';
import { defaultDeps, dispatchConfig } from './deps.js';
import type { DispatchDeps } from './deps.js';
import { leasableAt, release, tryLease } from './lease.js';
import type { PredecessorLook } from './lease.js';
import { CLAIM_RESPONSE_MAX_BYTES, hideable, MAX_CLAIM_WAIT_MS } from './limits.js';
import { presentation } from './present.js';
import type { ClaimedBatch } from './present.js';
import { settleMessage } from './queue-message.js';

export interface ClaimRequest {
  workerId: string;
  leaseMs?: number | undefined;
  waitMs?: number | undefined;
  limit?: number | undefined;
  /** Aborted when the client went away (where the platform can tell, §4.4.7): claim nothing. */
  clientGone?: AbortSignal | undefined;
}

/** How far past its deadline a claim's last long-poll may run, to save the receives of its last second. */
export const CLAIM_OVERSHOOT_MS = 500;

/**
 * Whole seconds (SQS's unit, at most 20) of a claim's next long-poll with `remainingMs` of its
 * wait left: rounded up when that ends at most CLAIM_OVERSHOOT_MS past the deadline, else down;
 * none under a second (the claim then receives without waiting, every 200 ms, as long as its
 * wait lasts). A pump's usual 10 s wait (9.99 s left by the first receive) is then one receive,
 * not a 9 s one and five more in its last second: 1 SQS request per empty claim instead of 6.
 */
export function longPollSeconds(remainingMs: number): number {
  if (remainingMs < 1000) return 0;
  const up = Math.ceil(remainingMs / 1000);
  const seconds = up * 1000 - remainingMs <= CLAIM_OVERSHOOT_MS ? up : Math.floor(remainingMs / 1000);
  return Math.min(20, seconds);
}

/** One claim in progress: what it asked for, and what it holds so far. Its steps share it. */
interface Claim {
  config: InstanceConfig;
  workerId: string;
  deps: DispatchDeps;
  mode: InstanceConfig['server']['dispatch']['mode'];
  leaseMs: number;
  /** Epoch ms when the claim stops waiting. */
  deadline: number;
  /** Whether the client went away. */
  gone: () => boolean;
  claimed: ClaimedBatch[];
  /** The chats of the batches claimed (never two of one chat in a claim, §4.4.7). */
  chats: Set<string>;
  /** Payload bytes of the batches claimed (the response stays under Lambda's limit). */
  bytes: number;
  /** The first storage failure met: thrown if the claim ends with nothing. */
  failure: unknown;
}

/** POST /dispatch/claim and claim-many: up to `max` batches, long-polling up to waitMs (capped at 25 s). */
export async function claim(
  config: InstanceConfig,
  req: ClaimRequest,
  max: number,
  deps: DispatchDeps = defaultDeps,
): Promise<ClaimedBatch[]> {
  const c = startClaim(config, req, deps);
  for (;;) {
    const remaining = c.deadline - deps.clock().getTime();
    const want = max - c.claimed.length;
    const received = await receive(c, want, remaining);
    const leased = await leaseReceived(c, received);
    const { accepted, giveBack } = admit(c, leased);
    giveBack.push(...(await readBack(c, accepted)));
    await giveAllBack(c, giveBack);
    // A receive takes at most 10 messages (SQS): a full one that added batches may have left
    // more, so a claim-many with a limit over 10 receives again, without waiting (§4.4.7: up to
    // the effective limit, 50 at most).
    const mayHoldMore = received.length >= Math.min(Queues.MAX_RECEIVE, want) && accepted.length > 0;
    if (c.claimed.length > 0 && c.claimed.length < max && mayHoldMore && !c.gone()) continue;
    if (c.claimed.length > 0 || c.gone() || deps.clock().getTime() >= c.deadline) return answer(c);
    await pauseBeforeNextReceive(c, remaining);
  }
}

function startClaim(config: InstanceConfig, req: ClaimRequest, deps: DispatchDeps): Claim {
  const d = dispatchConfig(config);
  return {
    config,
    workerId: req.workerId,
    deps,
    mode: d.mode,
    leaseMs: hideable(Math.max(1000, req.leaseMs ?? d.leaseMs)),
    deadline: deps.clock().getTime() + Math.min(MAX_CLAIM_WAIT_MS, req.waitMs ?? d.claimWaitMs),
    gone: () => req.clientGone?.aborted === true,
    claimed: [],
    chats: new Set(),
    bytes: 0,
    failure: undefined,
  };
}

/** The queue's next messages: a long-poll while nothing is claimed, else only what is there. */
async function receive(c: Claim, want: number, remainingMs: number): Promise<Queues.ReceivedBatch[]> {
  try {
    return await Queues.receiveBatches(
      want,
      // Once something is claimed, further receives only collect what is already there.
      c.claimed.length > 0 ? 0 : longPollSeconds(remainingMs),
      // Whole seconds, rounded down: the message may reappear up to a second before the
      // lease ends, and the claim that gets it then waits out the rest (tryLease).
      Math.floor(c.leaseMs / 1000),
    );
  } catch (error) {
    // The queue is unwell: nothing was received, so nothing is held. Wait a little and try
    // again until the claim's deadline; the client sees an empty claim, not a 500.
    logger.error('dispatch: receive failed', { error });
    await c.deps.sleep(Math.min(Math.max(c.deadline - c.deps.clock().getTime(), 0), 500));
    return [];
  }
}

/**
 * Leases the received batches at once, not one after another: each lease runs from its own
 * write, and the response should follow it closely. A batch due within a second is waited for
 * only while this claim would otherwise return nothing. Beside each batch, the chat's previous
 * one its message names (sequential modes), which must be settled before this one is leased:
 * read side by side, no round trip more.
 */
async function leaseReceived(c: Claim, received: Queues.ReceivedBatch[]): Promise<(BatchRecord | undefined)[]> {
  const predecessors = received.map((r) => (r.prev ? Batches.getBatch(r.prev) : undefined));
  predecessors.forEach((p) => p?.catch(() => undefined)); // awaited (and its failure handled) by tryLease
  const firstLooks = await Promise.all(received.map((r) => Batches.getBatch(r.batchId).catch(() => undefined)));
  const receivedWith = new Set(received.map((r) => r.batchId));
  const now = c.deps.clock().getTime();
  const someDueNow = firstLooks.some((b) => b !== undefined && leasableAt(b) <= now);
  const mayWait = c.claimed.length === 0 && !someDueNow ? c.deadline : 0;
  return Promise.all(
    received.map((r, i) => leaseOne(c, r, mayWait, firstLooks[i], { look: predecessors[i], receivedWith })),
  );
}

/** One received batch leased, or its message given back (client gone, storage failure). */
async function leaseOne(
  c: Claim,
  r: Queues.ReceivedBatch,
  mayWait: number,
  firstLook: BatchRecord | undefined,
  predecessor: PredecessorLook,
): Promise<BatchRecord | undefined> {
  try {
    if (c.gone()) {
      await settleMessage('give back (client gone)', r.batchId, r.receiptHandle, () =>
        Queues.hideBatch(r.receiptHandle, 0),
      );
      return undefined;
    }
    return await tryLease(c.config, r, c.workerId, c.leaseMs, mayWait, c.deps, firstLook, predecessor);
  } catch (error) {
    // Storage failed for this one: give its message back at once (rather than leave it
    // hidden for a whole lease) and carry on with the others.
    c.failure ??= error;
    logger.error('dispatch: a received batch was not leased', { batchId: r.batchId, error });
    await settleMessage('give back (error)', r.batchId, r.receiptHandle, () => Queues.hideBatch(r.receiptHandle, 0));
    return undefined;
  }
}

/**
 * Sorts leased batches into those the claim returns and those it gives back: never two batches
 * of one chat in one claim (§4.4.7), nor a response over Lambda's limit; a client that left
 * gets nothing either.
 */
function admit(c: Claim, leased: (BatchRecord | undefined)[]): { accepted: BatchRecord[]; giveBack: BatchRecord[] } {
  const accepted: BatchRecord[] = [];
  const giveBack: BatchRecord[] = [];
  for (const batch of leased) {
    if (!batch) continue;
    const sameChat = c.mode !== 'immediate' && c.chats.has(batch.chat_id);
    const tooLarge = c.claimed.length + accepted.length > 0 && c.bytes + batch.payload_bytes > CLAIM_RESPONSE_MAX_BYTES;
    if (sameChat || c.gone() || tooLarge) {
      giveBack.push(batch);
      continue;
    }
    c.chats.add(batch.chat_id);
    c.bytes += batch.payload_bytes;
    accepted.push(batch);
  }
  return { accepted, giveBack };
}

/** Reads the accepted batches' payloads into the claim; answers those that could not be read (to give back). */
async function readBack(c: Claim, accepted: BatchRecord[]): Promise<BatchRecord[]> {
  const unread: BatchRecord[] = [];
  const presented = await Promise.allSettled(accepted.map(presentation));
  presented.forEach((p, i) => {
    if (p.status === 'fulfilled') c.claimed.push(p.value);
    else {
      c.failure ??= p.reason;
      logger.error('dispatch: a leased batch could not be read back', { batchId: accepted[i]!.id, error: p.reason });
      unread.push(accepted[i]!);
    }
  });
  return unread;
}

async function giveAllBack(c: Claim, batches: BatchRecord[]): Promise<void> {
  await Promise.all(
    batches.map((batch) =>
      release(batch, c.workerId).catch((error: unknown) =>
        logger.error('dispatch: a batch was not given back', { batchId: batch.id, error }),
      ),
    ),
  );
}

/** What the claim returns: its batches, or its storage failure if it got none. */
function answer(c: Claim): ClaimedBatch[] {
  if (c.claimed.length === 0 && c.failure !== undefined) throw c.failure;
  return c.claimed;
}

/**
 * In the last second receives do not wait (whole seconds), and a batch due after this claim's
 * deadline was just made visible again: pause, so neither spins.
 */
async function pauseBeforeNextReceive(c: Claim, remainingMs: number): Promise<void> {
  if (remainingMs < 1000) await c.deps.sleep(Math.min(Math.max(c.deadline - c.deps.clock().getTime(), 0), 200));
}
