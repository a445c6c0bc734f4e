/**
 * Sealing (contract §4.4.3; docs/dispatch-plan.md): from unsealed inputs to batches in the queue.
 *
 * - Inputs are written with their source (user message, request resolution). Afterwards the
 *   writer calls `inputAdded`: in `immediate`/`sequential` mode the input is sealed into its
 *   own batch at once; in `batched_sequential` a flush signal goes to the standard queue,
 *   delayed by the debounce, and the flush consumer (`flush`) seals when §4.4.3 allows.
 * - Sealing puts the batch (a small header and its frozen payload in parts), marks the inputs
 *   taken and moves the chat's window in one transaction, then hands the batch to the FIFO
 *   queue (group = chat in the sequential modes, so a chat has at most one batch in flight, in
 *   order) and deletes the taken inputs. Batches of one chat are numbered and handed to the
 *   queue strictly in that order (`sendInOrder`).
 */
import type { Deadline } from '../../platform/deadline.js';
import { NO_DEADLINE } from '../../platform/deadline.js';
import type { InstanceConfig } from '../../platform/instance-config.js';
import { logger } from '../../platform/logger.js';
import * as Queues from '../../platform/queues.js';
import { retry } from '../../platform/retry.js';
import type { RetryPolicy } from '../../platform/retry.js';
import { transact } from '../../store/db.js';
import * as BatchRefs from '../../store/dispatch/batch-refs.js';
import * as Batches from '../../store/dispatch/batches.js';
import * as Inputs from '../../store/dispatch/inputs.js';
import type { DispatchInput } from '../../store/dispatch/inputs.js';
import { sealWrites } from '../../store/dispatch/seal.js';
import type { SealedBatch } from '../../store/dispatch/seal.js';
import * as State from '../../store/dispatch/state.js';
import type { DispatchState } from '../../store/dispatch/state.js';
import { defaultDeps, dispatchConfig } from './deps.js';
import type { DispatchDeps } from './deps.js';
import { BATCH_MAX_BYTES, BATCH_MAX_INPUTS, SEAL_MAX_ITEMS } from './limits.js';
import { compile, jsonBytes, splitParts } from './payload.js';

/**
 * Called after an input committed. A failure here is logged, not thrown: the input is safe in
 * the table and the chat's next signal (another input, a completion) picks it up.
 */
export async function inputAdded(
  config: InstanceConfig,
  chatId: string,
  deadline: Deadline,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  if (!Queues.dispatchConfigured()) return;
  try {
    const d = dispatchConfig(config);
    if (d.mode === 'batched_sequential') await Queues.sendFlush(chatId, d.batchDebounceMs);
    else await seal(config, chatId, deadline, deps);
  } catch (error) {
    logger.error('dispatch: could not schedule an input', { chatId, error });
  }
}

/** When the chat's unsealed inputs may be sealed (§4.4.3), or when to look again. */
export function sealingDecision(
  d: InstanceConfig['server']['dispatch'],
  state: DispatchState,
  nowMs: number,
): { seal: true } | { seal: false; wakeAt?: number } {
  if (!state.pending_inputs || !state.first_pending_at || !state.last_input_at) return { seal: false };
  const first = Date.parse(state.first_pending_at);
  const last = Date.parse(state.last_input_at);
  const typing = state.last_user_typing_at ? Date.parse(state.last_user_typing_at) : undefined;
  const maxWaitAt = first + d.maxBatchWaitMs;
  const debounceAt = last + d.batchDebounceMs;
  const typingBlocks = typing !== undefined && typing > first;
  const typingClearAt = typingBlocks ? typing + d.typingGraceMs : 0;
  if (nowMs >= maxWaitAt) return { seal: true };
  if (nowMs >= debounceAt && nowMs >= typingClearAt) return { seal: true };
  return { seal: false, wakeAt: Math.min(maxWaitAt, Math.max(debounceAt, typingClearAt)) };
}

/** The flush consumer's work for one chat signal (batched_sequential): a job, with no deadline. */
export async function flush(config: InstanceConfig, chatId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const d = dispatchConfig(config);
  if (d.mode !== 'batched_sequential') return seal(config, chatId, NO_DEADLINE, deps);
  for (;;) {
    const state = await State.getState(chatId);
    const now = deps.clock().getTime();
    // Rule 2: no sealing while the chat's batch is leased; its end sends a new signal, and an
    // expiry is looked at when the lease runs out.
    if (state.leased_batch_id && state.pending_inputs) {
      const leased = await Batches.getBatch(state.leased_batch_id);
      if (leased?.status === 'leased' && (leased.lease_expires_at ?? 0) > now) {
        const wait = leased.lease_expires_at! - now + 50;
        if (wait > 1000) return Queues.sendFlush(chatId, wait);
        await deps.sleep(wait);
        continue;
      }
    }
    const decision = sealingDecision(d, state, now);
    if (decision.seal) return seal(config, chatId, NO_DEADLINE, deps);
    if (decision.wakeAt === undefined) return;
    const wait = decision.wakeAt - now;
    // The queue delays whole seconds; the rest is waited here.
    if (wait > 1000) return Queues.sendFlush(chatId, wait);
    await deps.sleep(Math.max(0, wait) + 5);
  }
}

/**
 * Seals a chat's unsealed inputs: one batch of all of them (batched_sequential; only a payload
 * over BATCH_MAX_BYTES splits it) or one batch per input (the other modes), then hands the new
 * batches to the queue in their order and deletes the inputs they took. One seal transaction per
 * pass, until no unsealed input is left.
 */
export async function seal(
  config: InstanceConfig,
  chatId: string,
  deadline: Deadline,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  const mode = dispatchConfig(config).mode;
  for (;;) {
    const left = await retry({ ...STALE_SEAL, sleep: deps.sleep }, () => sealNext(chatId, mode, deadline, deps));
    if (left === 'none') return;
  }
}

class StaleSeal extends Error {}

/**
 * A seal transaction found the chat's dispatch state moved since it was read (a concurrent input
 * or seal) or a batch id taken: read again and plan anew. 20 tries in all, each pause uniform up
 * to 20 ms times the tries so far, at most 100 ms: sealers of one chat that collided drift apart.
 */
const STALE_SEAL: RetryPolicy = {
  attempts: 20,
  backoff: (tries) => Math.random() * 20 * Math.min(tries, 5),
  retryable: (error) => error instanceof StaleSeal,
};

/** One pass of `seal`: seals what one transaction holds. Answers whether unsealed inputs are left. */
async function sealNext(
  chatId: string,
  mode: InstanceConfig['server']['dispatch']['mode'],
  deadline: Deadline,
  deps: DispatchDeps,
): Promise<'none' | 'more'> {
  const state = await State.getState(chatId);
  const leftover = [...(state.taken_inputs ?? [])];
  const inputs = await Inputs.unsealedInputs(chatId, new Set(leftover));
  if (inputs.length === 0) {
    await sendInOrder(chatId, state, deadline);
    await releaseTaken(chatId, leftover);
    await State.clearPendingMark(chatId);
    return 'none';
  }
  const plan = await planSeal(chatId, mode, inputs, state.batches_sealed ?? 0, deps, state.last_batch_id);
  const rest = inputs.slice(plan.taken.length);
  const remaining = rest[0] ? { firstPendingAt: rest[0].created_at, lastInputAt: rest.at(-1)!.created_at } : {};
  const takenSks = plan.taken.map((i) => Inputs.inputKey(i).sk);
  const nowIso = deps.clock().toISOString();
  await transact(
    sealWrites(chatId, plan.batches, takenSks, state, remaining, nowIso, () => new StaleSeal()),
    deadline,
  );
  await sendInOrder(chatId, await State.getState(chatId), deadline);
  await releaseTaken(chatId, [...leftover, ...takenSks]);
  if (rest.length > 0) return 'more';
  await State.clearPendingMark(chatId);
  return 'none';
}

/** Deletes sealed inputs; a failure only leaves them listed as taken (the next seal retries). */
async function releaseTaken(chatId: string, sks: string[]): Promise<void> {
  await Inputs.releaseTaken(chatId, sks).catch((error: unknown) =>
    logger.warn('dispatch: sealed inputs not deleted yet', { chatId, error }),
  );
}

/**
 * The batches one seal transaction writes, and the inputs (a prefix of `inputs`) they take.
 * `after` is the chat's newest batch so far (DispatchState.last_batch_id): in the sequential
 * modes each batch names its predecessor, which a claim checks is settled (tryLease).
 */
export async function planSeal(
  chatId: string,
  mode: InstanceConfig['server']['dispatch']['mode'],
  inputs: DispatchInput[],
  sealedSoFar: number,
  deps: DispatchDeps,
  after?: string,
): Promise<{ batches: SealedBatch[]; taken: DispatchInput[] }> {
  const now = deps.clock();
  let seq = sealedSoFar;
  let prev = mode === 'immediate' ? undefined : after;
  const build = async (group: DispatchInput[]): Promise<SealedBatch & { bytes: number }> => {
    const id = deps.newId();
    const { kind, items, attachments } = await compile(chatId, group);
    const parts = splitParts(items, attachments);
    const bytes = parts.reduce((n, p) => n + jsonBytes(p), 0);
    const predecessor = prev;
    if (mode !== 'immediate') prev = id;
    return {
      group: mode === 'immediate' ? id : chatId,
      parts,
      bytes,
      header: {
        id,
        chat_id: chatId,
        kind,
        status: 'pending',
        chat_seq: ++seq,
        ...(predecessor ? { prev_batch_id: predecessor } : {}),
        attempt_count: 0,
        available_at: now.getTime(),
        created_at: now.toISOString(),
        item_count: items.length,
        part_count: parts.length,
        payload_bytes: bytes,
      },
    };
  };
  if (mode === 'batched_sequential') {
    // All of them, unless their text would not fit one batch: then the oldest that fit.
    let bytes = 0;
    let n = 0;
    while (n < inputs.length && n < BATCH_MAX_INPUTS && (n === 0 || bytes + jsonBytes(inputs[n]) <= BATCH_MAX_BYTES))
      bytes += jsonBytes(inputs[n++]);
    const taken = inputs.slice(0, n);
    return { batches: [await build(taken)], taken };
  }
  // One batch per input, as many as one transaction holds.
  const batches: SealedBatch[] = [];
  let items = 1; // the dispatch state's update
  let bytes = 0;
  for (const input of inputs) {
    const batch = await build([input]);
    const size = batch.parts.length + 2;
    if (batches.length > 0 && (items + size > SEAL_MAX_ITEMS || bytes + batch.bytes > BATCH_MAX_BYTES)) break;
    batches.push(batch);
    items += size;
    bytes += batch.bytes;
  }
  return { batches, taken: inputs.slice(0, batches.length) };
}

/**
 * Hands sealed batches to the FIFO queue in their chat order: number n only after n - 1 was
 * handed over (a seal racing another may commit second but send first otherwise). A batch is
 * sent first and marked sent after, so a crash in between leaves it to be sent again (the
 * queue drops the duplicate by its deduplication id) rather than lost; the mark is a
 * conditional write, so concurrent senders agree on the order.
 */
export async function sendInOrder(chatId: string, state: DispatchState, deadline: Deadline): Promise<void> {
  let sent = state.batches_sent ?? 0;
  let sealed = state.batches_sealed ?? 0;
  while (sent < sealed) {
    const next = sent + 1;
    const ref = await BatchRefs.batchRef(chatId, next);
    if (ref) {
      await Queues.sendBatch(ref);
      if (await BatchRefs.markSent(chatId, next, deadline)) {
        sent = next;
        continue;
      }
    }
    // Another sender handed this one over. It stops at the batches it knew of, so carry on
    // from the chat's state as it is now rather than leave ours to the sweeper.
    const now = await State.getState(chatId);
    if ((now.batches_sent ?? 0) <= sent) return; // nothing moved: not ours to send
    sent = now.batches_sent ?? 0;
    sealed = Math.max(sealed, now.batches_sealed ?? 0);
  }
}
