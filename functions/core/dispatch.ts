/**
 * Dispatch to agent workers (contract §2.5, §4.4, §5.11; docs/dispatch-plan.md).
 *
 * - Inputs are written with their source (user message, request resolution). Afterwards the
 *   writer calls `inputAdded`: in `immediate`/`sequential` mode the input is sealed into its
 *   own batch at once; in `batched_sequential` a flush signal goes to the standard queue,
 *   delayed by the debounce, and the flush consumer (`flush`) seals when §4.4.3 allows.
 * - Sealing puts the batch (a small header and its frozen payload in parts), marks the inputs
 *   taken and moves the chat's window in one transaction, then hands the batch to the FIFO
 *   queue (group = chat in the sequential modes, so a chat has at most one batch in flight, in
 *   order) and deletes the taken inputs. Batches of one chat are numbered and handed to the
 *   queue strictly in that order.
 * - Claims long-poll the FIFO queue; the received message's visibility is the lease. The
 *   batch item decides: lease checks, attempts, retry time and status are conditions on it,
 *   never on the queue. Queue visibility is whole seconds: a message is hidden for the floor of
 *   a lease or delay, and the claim that receives it up to a second early waits out the rest,
 *   so leases and retry delays end within milliseconds of their time (§11).
 */
import { ConflictError, FieldRuleError, NotFoundError } from '../errors.js';
import { isId, newId } from '../platform/ids.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import * as Queues from '../platform/queues.js';
import * as Chats from '../store/chats-repo.js';
import { guarded, transact } from '../store/db.js';
import * as Store from '../store/dispatch-repo.js';
import type {
  BatchAttachment,
  BatchItem,
  BatchPayload,
  BatchRecord,
  DispatchInput,
  DispatchState,
  SealedBatch,
} from '../store/dispatch-repo.js';
import { withEvents } from '../store/events-repo.js';
import { getMedia } from '../store/media-repo.js';
import { commitTouchingChat, systemMessage } from './chat-writes.js';

export interface DispatchDeps {
  clock: () => Date;
  newId: () => string;
  sleep: (ms: number) => Promise<void>;
}
export const defaultDeps: DispatchDeps = {
  clock: () => new Date(),
  newId,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** API Gateway ends a request after about 29 s; claims stop waiting at 25 s (§13 item 3). */
export const MAX_CLAIM_WAIT_MS = 25_000;
/**
 * Payload limits, in bytes of JSON: a stored part stays under DynamoDB's 400 KB item limit
 * (one input is at most a 300 KB message), a batch under a transaction's 4 MB, and a claim's
 * response under Lambda's 6 MB. A seal takes at most `SEAL_MAX_ITEMS` items per transaction.
 */
const PART_MAX_BYTES = 380_000;
const BATCH_MAX_BYTES = 3_000_000;
const CLAIM_RESPONSE_MAX_BYTES = 5_000_000;
const SEAL_MAX_ITEMS = 90;
/**
 * Inputs one batch takes at most: a seal lists them in the dispatch state (about 45 bytes
 * each) until they are deleted, and that item must stay well under 400 KB. More than this
 * many waiting behind one lease seal into consecutive batches.
 */
export const BATCH_MAX_INPUTS = 5000;

const dispatchConfig = (config: InstanceConfig) => config.server.dispatch;

// ---------------------------------------------------------------------------------------
// Payload (§4.4.8)
// ---------------------------------------------------------------------------------------

/** Builds items, attachments and compiledContent from inputs, looking media up in the chat. */
export async function compile(
  chatId: string,
  inputs: DispatchInput[],
): Promise<BatchPayload & Pick<BatchRecord, 'kind'>> {
  const media = await getMedia(inputs.flatMap((i) => i.media_ids));
  const attachments: BatchAttachment[] = [];
  const items: BatchItem[] = inputs.map((input, index) => {
    const attachmentNames: string[] = [];
    for (const mediaId of input.media_ids) {
      const m = media.get(mediaId);
      if (!m || m.chat_id !== chatId) continue;
      attachmentNames.push(m.filename);
      attachments.push({ mediaId, fileName: m.filename, kind: m.kind, sourceInputId: input.id, sourceIndex: index });
    }
    return {
      inputId: input.id,
      sourceKind: input.source_kind,
      sourceId: input.source_id,
      senderId: input.sender_id,
      content: input.content,
      ...(input.source_kind === 'user_message' && input.trace_kind !== undefined
        ? { traceKind: input.trace_kind }
        : {}),
      mediaIds: input.source_kind === 'user_message' ? input.media_ids : [],
      attachmentNames,
    };
  });
  return {
    items,
    attachments,
    kind: items.every((i) => i.sourceKind === 'request_resolved') ? 'request_batch' : 'user_batch',
  };
}

const textOr = (content: string) => (content.trim() === '' ? '(no text)' : content);

export function compiledContent(items: Pick<BatchItem, 'content' | 'attachmentNames'>[]): string {
  if (items.length === 0) return '';
  if (items.length === 1) return textOr(items[0]!.content);
  return items
    .map((item, i) => {
      const lines = [`[Message ${i + 1}]`];
      if (item.attachmentNames.length > 0) lines.push(`[attachments: ${JSON.stringify(item.attachmentNames)}]`);
      lines.push(textOr(item.content));
      return lines.join('\n');
    })
    .join('\n\n');
}

// ---------------------------------------------------------------------------------------
// Sealing
// ---------------------------------------------------------------------------------------

/**
 * Called after an input committed. A failure here is logged, not thrown: the input is safe in
 * the table and the chat's next signal (another input, a completion) picks it up.
 */
export async function inputAdded(
  config: InstanceConfig,
  chatId: string,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  if (!Queues.dispatchConfigured()) return;
  try {
    const d = dispatchConfig(config);
    if (d.mode === 'batched_sequential') await Queues.sendFlush(chatId, d.batchDebounceMs);
    else await seal(config, chatId, deps);
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

/** The flush consumer's work for one chat signal (batched_sequential). */
export async function flush(config: InstanceConfig, chatId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const d = dispatchConfig(config);
  if (d.mode !== 'batched_sequential') return seal(config, chatId, deps);
  for (;;) {
    const state = await Store.getState(chatId);
    const now = deps.clock().getTime();
    // Rule 2: no sealing while the chat's batch is leased; its end sends a new signal, and an
    // expiry is looked at when the lease runs out.
    if (state.leased_batch_id && state.pending_inputs) {
      const leased = await Store.getBatch(state.leased_batch_id);
      if (leased?.status === 'leased' && (leased.lease_expires_at ?? 0) > now) {
        const wait = leased.lease_expires_at! - now + 50;
        if (wait > 1000) return Queues.sendFlush(chatId, wait);
        await deps.sleep(wait);
        continue;
      }
    }
    const decision = sealingDecision(d, state, now);
    if (decision.seal) return seal(config, chatId, deps);
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
 * batches to the queue in their order and deletes the inputs they took.
 */
export async function seal(config: InstanceConfig, chatId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const mode = dispatchConfig(config).mode;
  for (let attempt = 1; ; attempt++) {
    const state = await Store.getState(chatId);
    const leftover = [...(state.taken_inputs ?? [])];
    const inputs = await Store.unsealedInputs(chatId, new Set(leftover));
    if (inputs.length === 0) {
      await sendInOrder(chatId, state);
      await releaseTaken(chatId, leftover);
      await Store.clearPendingMark(chatId);
      return;
    }
    const plan = await planSeal(chatId, mode, inputs, state.batches_sealed ?? 0, deps, state.last_batch_id);
    const rest = inputs.slice(plan.taken.length);
    const remaining = rest[0] ? { firstPendingAt: rest[0].created_at, lastInputAt: rest.at(-1)!.created_at } : {};
    const takenSks = plan.taken.map((i) => Store.inputKey(i).sk);
    try {
      await transact(
        Store.sealWrites(
          chatId,
          plan.batches,
          takenSks,
          state,
          remaining,
          deps.clock().toISOString(),
          () => new StaleSeal(),
        ),
      );
    } catch (error) {
      if (!(error instanceof StaleSeal) || attempt >= 20) throw error;
      await deps.sleep(Math.random() * 20 * Math.min(attempt, 5));
      continue;
    }
    await sendInOrder(chatId, await Store.getState(chatId));
    await releaseTaken(chatId, [...leftover, ...takenSks]);
    if (rest.length === 0) return Store.clearPendingMark(chatId);
  }
}

/** Deletes sealed inputs; a failure only leaves them listed as taken (the next seal retries). */
async function releaseTaken(chatId: string, sks: string[]): Promise<void> {
  await Store.releaseTaken(chatId, sks).catch((error: unknown) =>
    logger.warn('dispatch: sealed inputs not deleted yet', { chatId, error }),
  );
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

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

/** Cuts a payload into parts under PART_MAX_BYTES each (an item never spans two parts). */
function splitParts(items: BatchItem[], attachments: BatchAttachment[]): BatchPayload[] {
  const parts: BatchPayload[] = [];
  let current: BatchPayload = { items: [], attachments: [] };
  let bytes = 0;
  items.forEach((item, index) => {
    const own = attachments.filter((a) => a.sourceIndex === index);
    const size = jsonBytes(item) + jsonBytes(own);
    if (current.items.length > 0 && bytes + size > PART_MAX_BYTES) {
      parts.push(current);
      current = { items: [], attachments: [] };
      bytes = 0;
    }
    current.items.push(item);
    current.attachments.push(...own);
    bytes += size;
  });
  parts.push(current);
  return parts;
}

class StaleSeal extends Error {}

/**
 * Hands sealed batches to the FIFO queue in their chat order: number n only after n - 1 was
 * handed over (a seal racing another may commit second but send first otherwise). A batch is
 * sent first and marked sent after, so a crash in between leaves it to be sent again (the
 * queue drops the duplicate by its deduplication id) rather than lost; the mark is a
 * conditional write, so concurrent senders agree on the order.
 */
export async function sendInOrder(chatId: string, state: DispatchState): Promise<void> {
  let sent = state.batches_sent ?? 0;
  let sealed = state.batches_sealed ?? 0;
  while (sent < sealed) {
    const next = sent + 1;
    const ref = await Store.batchRef(chatId, next);
    if (ref) {
      await Queues.sendBatch(ref);
      if (await Store.markSent(chatId, next)) {
        sent = next;
        continue;
      }
    }
    // Another sender handed this one over. It stops at the batches it knew of, so carry on
    // from the chat's state as it is now rather than leave ours to the sweeper.
    const now = await Store.getState(chatId);
    if ((now.batches_sent ?? 0) <= sent) return; // nothing moved: not ours to send
    sent = now.batches_sent ?? 0;
    sealed = Math.max(sealed, now.batches_sealed ?? 0);
  }
}

/**
 * Picks up a chat's dispatch work that a crash or a lost signal left behind (the sweeper):
 * sealed batches never handed to the queue, and unsealed inputs nobody signalled. Safe to run
 * at any time: it does what the normal path would have done.
 */
export async function resume(config: InstanceConfig, chatId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const state = await Store.getState(chatId);
  await sendInOrder(chatId, state);
  if (state.pending_inputs) await flush(config, chatId, deps);
  else await Store.clearPendingMark(chatId);
}

/** How long dispatch work may sit unmoved before the sweeper takes it as stranded. */
export const sweepAfterMs = (config: InstanceConfig): number =>
  (dispatchConfig(config).mode === 'batched_sequential' ? dispatchConfig(config).maxBatchWaitMs : 0) + 30_000;

/** The sweeper's run: resumes every chat whose dispatch work looks stranded. Returns how many. */
export async function sweep(
  config: InstanceConfig,
  deps: DispatchDeps = defaultDeps,
  staleAfterMs = sweepAfterMs(config),
): Promise<number> {
  const before = new Date(deps.clock().getTime() - staleAfterMs).toISOString();
  const chats = await Store.staleDispatchWork(before, 100);
  const results = await Promise.allSettled(chats.map((chatId) => resume(config, chatId, deps)));
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      logger.error('dispatch sweep: chat not resumed', { chatId: chats[i], error: r.reason });
  });
  return chats.length;
}

// ---------------------------------------------------------------------------------------
// Claims and leases
// ---------------------------------------------------------------------------------------

export interface ClaimRequest {
  workerId: string;
  leaseMs?: number | undefined;
  waitMs?: number | undefined;
  limit?: number | undefined;
  /** Aborted when the client went away (where the platform can tell, §4.4.7): claim nothing. */
  clientGone?: AbortSignal | undefined;
}

/** A batch as workers receive it (§2.5, camelCase). */
export interface ClaimedBatch {
  batchId: string;
  chatId: string;
  kind: BatchRecord['kind'];
  agentIdHint: string | null;
  compiledContent: string;
  items: BatchItem[];
  attachments: BatchAttachment[];
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

/** POST /dispatch/claim and claim-many: up to `max` batches, long-polling up to waitMs (capped at 25 s). */
export async function claim(
  config: InstanceConfig,
  req: ClaimRequest,
  max: number,
  deps: DispatchDeps = defaultDeps,
): Promise<ClaimedBatch[]> {
  const d = dispatchConfig(config);
  const leaseMs = hideable(Math.max(1000, req.leaseMs ?? d.leaseMs));
  const deadline = deps.clock().getTime() + Math.min(MAX_CLAIM_WAIT_MS, req.waitMs ?? d.claimWaitMs);
  const gone = () => req.clientGone?.aborted === true;
  const claimed: ClaimedBatch[] = [];
  const chats = new Set<string>();
  let bytes = 0;
  let failure: unknown;
  for (;;) {
    const remaining = deadline - deps.clock().getTime();
    const want = max - claimed.length;
    let received: Queues.ReceivedBatch[] = [];
    try {
      received = await Queues.receiveBatches(
        want,
        // Once something is claimed, further receives only collect what is already there.
        claimed.length > 0 ? 0 : longPollSeconds(remaining),
        // Whole seconds, rounded down: the message may reappear up to a second before the
        // lease ends, and the claim that gets it then waits out the rest (tryLease).
        Math.floor(leaseMs / 1000),
      );
    } catch (error) {
      // The queue is unwell: nothing was received, so nothing is held. Wait a little and try
      // again until the claim's deadline; the client sees an empty claim, not a 500.
      logger.error('dispatch: receive failed', { error });
      await deps.sleep(Math.min(Math.max(deadline - deps.clock().getTime(), 0), 500));
    }
    // The received batches are leased at once, not one after another: each lease runs from
    // its own write, and the response should follow it closely. A batch due within a second
    // is waited for only while this claim would otherwise return nothing.
    // Beside each batch, the chat's previous one its message names (sequential modes), which
    // must be settled before this one is leased: read side by side, no round trip more.
    const predecessors = received.map((r) => (r.prev ? Store.getBatch(r.prev) : undefined));
    predecessors.forEach((p) => p?.catch(() => undefined)); // awaited (and its failure handled) by tryLease
    const firstLooks = await Promise.all(received.map((r) => Store.getBatch(r.batchId).catch(() => undefined)));
    const receivedIds = new Set(received.map((r) => r.batchId));
    const now = deps.clock().getTime();
    const someDueNow = firstLooks.some((b) => b !== undefined && leasableAt(b) <= now);
    const mayWait = claimed.length === 0 && !someDueNow ? deadline : 0;
    const leased = await Promise.all(
      received.map(async (r, i) => {
        try {
          if (gone()) {
            await settleMessage('give back (client gone)', r.batchId, r.receiptHandle, () =>
              Queues.hideBatch(r.receiptHandle, 0),
            );
            return undefined;
          }
          return await tryLease(config, r, req.workerId, leaseMs, mayWait, deps, firstLooks[i], {
            look: predecessors[i],
            receivedWith: receivedIds,
          });
        } catch (error) {
          // Storage failed for this one: give its message back at once (rather than leave it
          // hidden for a whole lease) and carry on with the others.
          failure ??= error;
          logger.error('dispatch: a received batch was not leased', { batchId: r.batchId, error });
          await settleMessage('give back (error)', r.batchId, r.receiptHandle, () =>
            Queues.hideBatch(r.receiptHandle, 0),
          );
          return undefined;
        }
      }),
    );
    const accepted: BatchRecord[] = [];
    const giveBack: BatchRecord[] = [];
    for (const batch of leased) {
      if (!batch) continue;
      const sameChat = d.mode !== 'immediate' && chats.has(batch.chat_id);
      // Never two batches of one chat in one claim (§4.4.7), nor a response over Lambda's limit:
      // give such a batch back. A client that left gets nothing either.
      if (
        sameChat ||
        gone() ||
        (claimed.length + accepted.length > 0 && bytes + batch.payload_bytes > CLAIM_RESPONSE_MAX_BYTES)
      ) {
        giveBack.push(batch);
        continue;
      }
      chats.add(batch.chat_id);
      bytes += batch.payload_bytes;
      accepted.push(batch);
    }
    const presented = await Promise.allSettled(accepted.map((b) => presentations.get(b) ?? present(b)));
    presented.forEach((p, i) => {
      if (p.status === 'fulfilled') claimed.push(p.value);
      else {
        failure ??= p.reason;
        logger.error('dispatch: a leased batch could not be read back', { batchId: accepted[i]!.id, error: p.reason });
        giveBack.push(accepted[i]!);
      }
    });
    await Promise.all(
      giveBack.map((batch) =>
        release(batch, req.workerId).catch((error: unknown) =>
          logger.error('dispatch: a batch was not given back', { batchId: batch.id, error }),
        ),
      ),
    );
    // A receive takes at most 10 messages (SQS): a full one that added batches may have left
    // more, so a claim-many with a limit over 10 receives again, without waiting (§4.4.7: up to
    // the effective limit, 50 at most).
    const mayHoldMore = received.length >= Math.min(Queues.MAX_RECEIVE, want) && accepted.length > 0;
    if (claimed.length > 0 && claimed.length < max && mayHoldMore && !gone()) continue;
    if (claimed.length > 0 || gone() || deps.clock().getTime() >= deadline) {
      if (claimed.length === 0 && failure !== undefined) throw failure;
      return claimed;
    }
    // In the last second receives do not wait (whole seconds), and a batch due after this
    // claim's deadline was just made visible again: pause, so neither spins.
    if (remaining < 1000) await deps.sleep(Math.min(Math.max(deadline - deps.clock().getTime(), 0), 200));
  }
}

/** Presentations read while leasing (tryLease), by the leased batch record. */
const presentations = new WeakMap<BatchRecord, Promise<ClaimedBatch>>();

async function present(batch: BatchRecord): Promise<ClaimedBatch> {
  const [chat, payload] = await Promise.all([Chats.getChat(batch.chat_id), Store.getPayload(batch.id)]);
  const hint = chat?.agent_ids.find((a) => a !== '') ?? null;
  return {
    batchId: batch.id,
    chatId: batch.chat_id,
    kind: batch.kind,
    agentIdHint: hint,
    // Rebuilt from the frozen items (deterministic), so a batch stores its text once.
    compiledContent: compiledContent(payload.items),
    items: payload.items,
    attachments: payload.attachments,
  };
}

/**
 * A queue call on a batch's message after the table decided what should happen to it. Its
 * failure never fails the request. A stale receipt (the message was received again since, or
 * is visible) needs nothing: whoever receives it next consults the table. Any other failure
 * marks the batch, and the sweeper puts the message where the table says it belongs.
 */
async function settleMessage(
  what: string,
  batchId: string,
  receiptHandle: string,
  call: () => Promise<void>,
): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (Queues.isStaleReceipt(error)) {
      logger.info(`dispatch: ${what}: receipt no longer current`, { batchId });
      return;
    }
    logger.warn(`dispatch: ${what} failed on the queue; marked for the sweeper`, { batchId, error });
    await Store.markRepair(batchId, receiptHandle, new Date().toISOString()).catch((markError: unknown) =>
      logger.error('dispatch: repair mark not written', { batchId, error: markError }),
    );
  }
}

/** When a batch may be leased: a pending one when due, a leased one when its lease runs out; never once ended. */
const isFinished = (batch: BatchRecord) => batch.status === 'completed' || batch.status === 'failed';

function leasableAt(batch: BatchRecord): number {
  if (batch.status === 'pending') return batch.available_at;
  if (batch.status === 'leased') return batch.lease_expires_at ?? 0;
  return Number.POSITIVE_INFINITY;
}

/**
 * Leases a received batch if the table says it may be claimed now: pending and due, or leased
 * with a lease that ran out (§4.4.4). A batch due within a second (its message reappears up
 * to a second early) is waited for, if the claim's own wait allows (`deadline`; 0 when it
 * already holds a batch, whose lease is running); one due later is hidden
 * until then (its chat's later batches wait behind it); a finished one's message is dropped.
 */
async function tryLease(
  config: InstanceConfig,
  r: Queues.ReceivedBatch,
  workerId: string,
  leaseMs: number,
  deadline: number,
  deps: DispatchDeps,
  /** The batch as just read, if the caller read it (saves the first read). */
  firstLook?: BatchRecord,
  /** Its predecessor as the caller is reading it (named by the message), and the batches received with it. */
  predecessor?: { look: Promise<BatchRecord | undefined> | undefined; receivedWith: ReadonlySet<string> },
): Promise<BatchRecord | undefined> {
  let predecessorSettled = false;
  for (let look = 0; look < 3; look++) {
    const batch = look === 0 && firstLook ? firstLook : await Store.getBatch(r.batchId);
    const now = deps.clock().getTime();
    if (!batch || isFinished(batch)) {
      await settleMessage('drop a finished batch', r.batchId, r.receiptHandle, () =>
        Queues.deleteBatchMessage(r.receiptHandle),
      );
      return undefined;
    }
    const dueAt = leasableAt(batch);
    if (dueAt > now) {
      const wait = dueAt - now;
      if (wait < 1000 && now + wait <= deadline) {
        await deps.sleep(wait);
        continue;
      }
      // Our receive is now the message's newest: the lease holder's heartbeat and complete
      // must use it. If the lease moved meanwhile (a heartbeat, an end), look again.
      if (
        batch.status === 'leased' &&
        batch.lease_owner &&
        !(await Store.noteReceipt(batch.id, batch.lease_owner, dueAt, r.receiptHandle))
      )
        continue;
      await settleMessage('hide until due', r.batchId, r.receiptHandle, () => Queues.hideBatch(r.receiptHandle, wait));
      return undefined;
    }
    // A first lease waits for the chat's previous batch to settle (an expired lease's batch
    // passed this check when it was leased). Normally the queue saw to it: the previous batch's
    // message went first and was deleted when it ended.
    if (batch.status === 'pending' && batch.prev_batch_id && !predecessorSettled) {
      const prevId = batch.prev_batch_id;
      const prev =
        look === 0 && predecessor?.look && r.prev === prevId ? await predecessor.look : await Store.getBatch(prevId);
      if (prev && !isFinished(prev)) {
        // Received together (AWS returns a group's messages in order): give this one back, it follows.
        if (predecessor?.receivedWith.has(prevId)) {
          await settleMessage('give back (after its predecessor)', r.batchId, r.receiptHandle, () =>
            Queues.hideBatch(r.receiptHandle, 0),
          );
        } else {
          await restoreOrder(prev, batch, r.receiptHandle, deps);
        }
        return undefined;
      }
      predecessorSettled = true;
    }
    const outcome = await Store.leaseBatch(r.batchId, {
      from: batch.status === 'leased' ? 'expired' : 'pending',
      workerId,
      now,
      leaseMs,
      receiptHandle: r.receiptHandle,
    });
    if (outcome.ok) {
      // Its presentation (chat and payload reads) side by side with the dispatch state's note:
      // one round trip less. Unused if the claim gives the batch back.
      const shown = present(outcome.batch);
      shown.catch(() => undefined); // awaited (and its failure handled) by the claim
      presentations.set(outcome.batch, shown);
      if (dispatchConfig(config).mode === 'batched_sequential') await Store.noteLeased(batch.chat_id, batch.id);
      return outcome.batch;
    }
    // It changed meanwhile (a heartbeat, a retry delay, a completion): look again.
  }
  // It kept changing under us: give the message back now rather than hold it for a lease.
  await settleMessage('give back (busy)', r.batchId, r.receiptHandle, () => Queues.hideBatch(r.receiptHandle, 0));
  return undefined;
}

/**
 * A batch received while the chat's previous batch is unsettled: in its FIFO group, whatever was
 * queued before it is gone, so the previous batch's message was lost (its retention ran out, or
 * it was dead-lettered after many receives), or only a copy of it is left, queued behind this
 * one (a repair's). A copy cannot jump the queue, so this one goes behind it: a copy of the
 * previous batch, then a copy of this one, then this message is deleted. A crash in between
 * leaves spare copies, dropped when they turn up after their batch ended; a batch further back
 * that is unsettled too is restored the same way when its successor's copy comes up.
 */
async function restoreOrder(
  prev: BatchRecord,
  batch: BatchRecord,
  receiptHandle: string,
  deps: DispatchDeps,
): Promise<void> {
  logger.warn('dispatch: a batch came before its unsettled predecessor; both queued again, in order', {
    batchId: batch.id,
    prevBatchId: prev.id,
    chatId: batch.chat_id,
  });
  const copy = `o${deps.newId()}`;
  await Queues.sendBatch(Store.messageOf(prev), copy);
  await Queues.sendBatch(Store.messageOf(batch), copy);
  await settleMessage('drop a message queued again', batch.id, receiptHandle, () =>
    Queues.deleteBatchMessage(receiptHandle),
  );
}

/** Gives back a batch this claim leased but must not return (its chat already has one in it). */
async function release(batch: BatchRecord, workerId: string): Promise<void> {
  const outcome = await Store.returnBatch(batch.id, workerId, Date.now());
  const receipt = outcome.ok ? outcome.batch.receipt_handle : undefined;
  if (receipt) await settleMessage('give back', batch.id, receipt, () => Queues.hideBatch(receipt, 0));
}

/**
 * The sweeper's repair of one batch marked after a failed queue call: puts its message where
 * the table says it belongs (hidden until the batch is due, or deleted once it ended). If the
 * receipt is no longer current the message is visible, held by a newer receive, or gone; an
 * unfinished batch then gets a copy (every receive consults the table, so a spare copy is
 * simply dropped when it turns up after the batch ended). A queue error keeps the mark.
 */
export async function repairMessage(batchId: string, deps: DispatchDeps = defaultDeps): Promise<void> {
  const batch = await Store.getBatch(batchId);
  if (!batch?.gsi3sk) return;
  const receipt = batch.repair_receipt ?? batch.receipt_handle;
  const finished = isFinished(batch);
  const dueAt = leasableAt(batch);
  let current = receipt !== undefined;
  if (receipt) {
    try {
      if (finished) await Queues.deleteBatchMessage(receipt);
      else await Queues.hideBatch(receipt, Math.max(0, dueAt - deps.clock().getTime()));
    } catch (error) {
      if (!Queues.isStaleReceipt(error)) throw error;
      current = false;
    }
  }
  if (!current && !finished) await Queues.sendBatch(Store.messageOf(batch), `r${deps.clock().getTime()}`);
  await Store.clearRepair(batchId, batch.gsi3sk);
}

/** The sweeper's second duty: repairs every batch marked after a failed queue call. Returns how many. */
export async function repairMessages(deps: DispatchDeps = defaultDeps): Promise<number> {
  const ids = await Store.batchesToRepair(100);
  const results = await Promise.allSettled(ids.map((id) => repairMessage(id, deps)));
  results.forEach((r, i) => {
    if (r.status === 'rejected')
      logger.error('dispatch sweep: batch message not repaired', { batchId: ids[i], error: r.reason });
  });
  return ids.length;
}

const batchNotFound = () => new NotFoundError('Dispatch batch not found.');
const leaseLost = (batchId: string, workerId: string) =>
  new ConflictError('Dispatch lease is no longer owned by this worker.', { batchId, workerId });

async function leaseFailure(batchId: string, workerId: string, old: BatchRecord | undefined): Promise<Error> {
  if (old) return leaseLost(batchId, workerId);
  return (await Store.getBatch(batchId)) ? leaseLost(batchId, workerId) : batchNotFound();
}

function checkBatchId(batchId: string): void {
  if (!isId(batchId)) throw batchNotFound();
}

/** POST /dispatch/{batchId}/heartbeat (§4.4.4). */
export async function heartbeat(
  config: InstanceConfig,
  batchId: string,
  workerId: string,
  extendMs: number | undefined,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const now = deps.clock().getTime();
  const extend = hideable(Math.max(1000, extendMs ?? dispatchConfig(config).leaseMs));
  const outcome = await Store.extendLease(batchId, workerId, now, extend);
  if (!outcome.ok) throw await leaseFailure(batchId, workerId, outcome.batch);
  const receipt = outcome.batch.receipt_handle;
  if (receipt) await settleMessage('extend the lease', batchId, receipt, () => Queues.hideBatch(receipt, extend));
}

/** POST /dispatch/{batchId}/complete (§4.4.4): no event, no message. */
export async function complete(
  config: InstanceConfig,
  batchId: string,
  workerId: string,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const now = deps.clock();
  const outcome = await Store.completeBatch(batchId, workerId, now);
  if (!outcome.ok) throw await leaseFailure(batchId, workerId, outcome.batch);
  await afterEnd(config, batchId, outcome.batch.chat_id, outcome.batch.receipt_handle);
}

export interface FailRequest {
  workerId: string;
  reason: string;
  retryable: boolean;
  retryDelayMs?: number | undefined;
}

/**
 * The delay before a retried batch is due again (§4.4.5): the worker's `retryDelayMs` when it
 * gave one (0 included), else retryBaseMs doubled per attempt already counted, capped at retryMaxMs.
 */
export function retryDelay(
  d: Pick<InstanceConfig['server']['dispatch'], 'retryBaseMs' | 'retryMaxMs'>,
  attemptCount: number,
  override?: number,
): number {
  return hideable(override ?? Math.min(d.retryMaxMs, d.retryBaseMs * 2 ** (attemptCount - 1)));
}

/**
 * The queue hides a message for at most 12 hours (SQS's visibility limit), so a lease, an
 * extension or a retry delay is capped there: a larger one (the contract sets no maximum) would
 * fail the queue call after the table decided, stranding the batch (issue 17, finding 4).
 */
export const MAX_HIDE_MS = 12 * 3600 * 1000;
const hideable = (ms: number): number => Math.min(ms, MAX_HIDE_MS);

/** POST /dispatch/{batchId}/fail (§4.4.5, §4.4.6). */
export async function fail(
  config: InstanceConfig,
  batchId: string,
  req: FailRequest,
  deps: DispatchDeps = defaultDeps,
): Promise<void> {
  checkBatchId(batchId);
  const d = dispatchConfig(config);
  const reason = req.reason.trim();
  if (reason === '') throw new FieldRuleError('reason', 'reason is required.');
  const current = await Store.getBatch(batchId);
  if (!current) throw batchNotFound();
  const now = deps.clock();
  const nowMs = now.getTime();
  if (req.retryable && current.attempt_count < d.maxAttempts) {
    const delay = retryDelay(d, current.attempt_count, req.retryDelayMs);
    const outcome = await Store.scheduleRetry(batchId, req.workerId, nowMs, nowMs + delay, reason);
    if (!outcome.ok) throw await leaseFailure(batchId, req.workerId, outcome.batch);
    // The message stays in flight through the delay, so the chat's later batches wait (§4.4.2).
    // A delay under a second shows it again at once; the claim that receives it waits out the rest.
    const receipt = outcome.batch.receipt_handle;
    if (receipt) await settleMessage('retry delay', batchId, receipt, () => Queues.hideBatch(receipt, delay));
    // The batch is no longer leased: inputs that waited for it may seal now (§4.4.3 rule 2).
    if (d.mode === 'batched_sequential') {
      await Queues.sendFlush(current.chat_id, 0).catch((error: unknown) =>
        logger.error('dispatch: flush signal not sent', { batchId, error }),
      );
    }
    return;
  }
  const chat = await Chats.getChat(current.chat_id);
  if (!chat) throw batchNotFound();
  const text = `Dispatch failed after ${current.attempt_count} attempts: ${reason}`;
  const system = systemMessage(chat, text, { dispatchFailure: true }, now, deps.newId);
  // The batch's end, the system message, its chat counters and its event: one transaction.
  await withEvents(system.events, now.toISOString(), (eventItems) =>
    commitTouchingChat(
      current.chat_id,
      system.activity,
      [
        guarded(Store.failBatchWrite(batchId, req.workerId, nowMs, reason, now.toISOString()), () =>
          leaseLost(batchId, req.workerId),
        ),
        ...system.items,
      ],
      eventItems,
    ),
  );
  await afterEnd(config, batchId, current.chat_id, current.receipt_handle);
}

/** After a batch ended: drop its message (the chat's next batch can flow) and signal sealing. */
async function afterEnd(
  config: InstanceConfig,
  batchId: string,
  chatId: string,
  receipt: string | undefined,
): Promise<void> {
  // Side by side (one round trip): a batch the flush seals meanwhile is sent to the chat's FIFO
  // message group, which holds it back until the ended batch's message is deleted anyway.
  await Promise.all([
    receipt
      ? settleMessage('drop an ended batch', batchId, receipt, () => Queues.deleteBatchMessage(receipt))
      : undefined,
    dispatchConfig(config).mode === 'batched_sequential'
      ? Queues.sendFlush(chatId, 0).catch((error: unknown) =>
          logger.error('dispatch: flush signal not sent', { chatId, error }),
        )
      : undefined,
  ]);
}
