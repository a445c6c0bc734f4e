/**
 * Batch sealing in batched_sequential mode (contract §4.4.3, §4.4.8, §11), in real time: one
 * case each for the debounce, the user-typing grace and the max wait, and rule 2 (no sealing
 * while the chat has a leased batch) as each way a lease ends signals the chat. The rules'
 * variants (typing restarting the grace, typing before the first input, the max wait while the
 * user types, the exact times to look again) are unit tests with a fake clock:
 * test/unit/dispatch-sealing.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { LATE, QUICK_RETRIES, blocks, configWith, dispatchApi, sleep, userItem } from './support.js';
import type { Batch } from './support.js';

const DEBOUNCE = 1000;
const GRACE = 3000;
// Well apart from the grace (5 s of room): the typing test below tells the two releases apart by
// time, and under a full run's load its typing POST once landed late enough (5 s max wait) to blur them.
const MAX_WAIT = 8000;

const config = configWith({
  mode: 'batched_sequential',
  batchDebounceMs: DEBOUNCE,
  typingGraceMs: GRACE,
  maxBatchWaitMs: MAX_WAIT,
  ...QUICK_RETRIES,
  maxAttempts: 2,
});

const { api, d } = dispatchApi(config);
const W = 'worker-1';

/** A new chat whose message "first" is claimed as a batch of its own, leased for `leaseMs` (rule 2 applies). */
async function leasedFirst(leaseMs: number) {
  const { chat, id: m1 } = await d.chatWithMessage('first');
  const b1 = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 5000, leaseMs });
  expect(b1.items.map((i) => i.sourceId)).toEqual([m1]);
  return { chat, b1 };
}

/** Claims and completes what is left, and gives each batch's source ids. */
const drainedGroups = async () => (await d.drain(DEBOUNCE + 2000)).map((b) => b.items.map((i) => i.sourceId));

/**
 * A quiet spell before the seal, from the inputs' times (the service's clock): an input no other
 * followed within `quietMs`, early enough that the spell had passed when the batch was claimed.
 */
const quietBefore = (times: number[], claimedAt: number, quietMs: number) =>
  times.some((t, i) => t + quietMs <= claimedAt && (times[i + 1] ?? Infinity) - t >= quietMs);

/**
 * One chat: messages 200 ms apart (plus each POST's own time) until past the latest the max wait
 * may seal. The first batch must come at the max wait (counted from the first input's time), or
 * earlier only after a quiet spell of the debounce; it carries a prefix of the inputs, in order.
 */
async function sealRound(): Promise<'max wait' | 'debounce'> {
  const chat = await d.newChat();
  const sent: string[] = [];
  sent.push(await d.say(chat.id, 'm0'));
  const firstAt = Date.now();
  const sender = (async () => {
    // Past the latest a max-wait seal may come, so that a seal by the debounce alone (after the
    // last message) would come later still and fail the bound below.
    for (let i = 1; Date.now() - firstAt < MAX_WAIT + LATE + 500; i++) {
      // Kept (time is the behavior): messages faster than the debounce.
      await sleep(200);
      sent.push(await d.say(chat.id, `m${i}`));
    }
  })();
  const first: Batch = await d.claimOne({ workerId: W, waitMs: MAX_WAIT + 4000 });
  const claimedAt = Date.now();
  const sentByThen = sent.length;
  const firstIds = first.items.map((i) => i.sourceId);
  await d.completeOk(first.batchId, W);
  await sender;
  // The rest follows in later batches, in order, each input once. Drained before any assertion,
  // so a failure here leaves no batch of this chat for the next test's claims.
  const all = [...firstIds];
  while (all.length < sent.length) {
    const next = await d.claimOne({ workerId: W, waitMs: MAX_WAIT + 3000 });
    all.push(...next.items.map((i) => i.sourceId));
    await d.completeOk(next.batchId, W);
  }
  expect(all).toEqual(sent);
  // Each input's time is its message's created_at (one write); the first sets the max wait.
  const page = await api.get(`/api/v1/chats/${chat.id}/messages?limit=200`);
  const byId = new Map<string, number>(page.body.data.map((m: any) => [m.id, Date.parse(m.created_at)]));
  const times = sent.map((id) => byId.get(id)!);
  expect(times.every((t) => Number.isFinite(t))).toBe(true);
  expect(firstIds).toEqual(sent.slice(0, firstIds.length));
  expect(firstIds.length).toBeLessThanOrEqual(sentByThen);
  expect(first.compiledContent).toBe(blocks(first.items.map((i) => i.content)));
  const maxWaitAt = times[0]! + MAX_WAIT;
  if (claimedAt >= maxWaitAt - 5) {
    // Sealed by the max wait (created_at has whole milliseconds), not long after it.
    expect(claimedAt - maxWaitAt).toBeLessThanOrEqual(LATE);
    expect(firstIds.length).toBeGreaterThanOrEqual(5);
    return 'max wait';
  }
  // Sealed earlier: only the debounce may, so a spell of (about) the debounce without an input
  // came first. An input's time is taken before its write commits, so the spell the service saw
  // may be a little longer than the times show: 300 ms of room, where the inputs came 200 ms
  // apart plus each POST's time.
  expect(quietBefore(times, claimedAt, DEBOUNCE - 300)).toBe(true);
  return 'debounce';
}

describe('batched_sequential sealing', () => {
  it(
    'merges messages sent within the debounce into one batch, claimable after the debounce (§4.4.8 blocks, ' +
      'attachments)',
    async () => {
      const chat = await d.newChat();
      const media = await d.putMedia(chat.id, 'plan.pdf');
      const ids = [
        await d.say(chat.id, 'see attached', { trace: { mediaIds: [media] } }),
        await d.say(chat.id, 'and summarize it'),
      ];
      // The last input's time is the service's, between these two.
      const lastSending = Date.now();
      ids.push(await d.say(chat.id, 'thanks'));
      const lastSent = Date.now();
      // Not sealed before the debounce has passed.
      await d.claimNone({ workerId: W, waitMs: 0 });
      const batch = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 5000 });
      expect(Date.now() - lastSending).toBeGreaterThanOrEqual(DEBOUNCE);
      expect(Date.now() - lastSent).toBeLessThanOrEqual(DEBOUNCE + LATE);
      expect(batch).toEqual({
        batchId: expect.any(String),
        chatId: chat.id,
        kind: 'user_batch',
        agentIdHint: 'assistant',
        compiledContent:
          '[Message 1]\n[attachments: ["plan.pdf"]]\nsee attached\n\n[Message 2]\nand summarize it\n\n[Message ' +
          '3]\nthanks',
        items: [
          userItem(ids[0], 'see attached', { mediaIds: [media], attachmentNames: ['plan.pdf'] }),
          userItem(ids[1], 'and summarize it'),
          userItem(ids[2], 'thanks'),
        ],
        attachments: [
          {
            mediaId: media,
            fileName: 'plan.pdf',
            kind: 'file',
            sourceInputId: batch.items[0]!.inputId,
            sourceIndex: 0,
          },
        ],
      });
      expect(new Set(batch.items.map((i) => i.inputId)).size).toBe(3);
      await d.completeOk(batch.batchId, W);
      // The window is empty again: a later message is a batch of its own.
      const later = await d.say(chat.id, 'one more');
      const next = await d.claimOne({ workerId: W, waitMs: DEBOUNCE + 5000 });
      expect(next.items.map((i) => i.sourceId)).toEqual([later]);
      expect(next.compiledContent).toBe('one more');
      await d.completeOk(next.batchId, W);
    },
  );

  it('user typing after the first message holds the batch for the typing grace', async () => {
    const { chat, id: first } = await d.chatWithMessage('hello');
    const sentAt = Date.now();
    // Kept (time is the behavior): the typing comes a little after the message.
    await sleep(300);
    // Taken before the typing signal: its grace runs from the service's clock reading, after this.
    const typedAt = Date.now();
    await d.typing(chat.id);
    // The debounce has passed, the typing grace has not.
    // Kept (time is the behavior): past the debounce, inside the typing grace.
    await sleep(Math.max(0, sentAt + DEBOUNCE + 600 - Date.now()));
    await d.claimNone({ workerId: W, waitMs: 0 });
    const batch = await d.claimOne({ workerId: W, waitMs: GRACE + 5000 });
    const now = Date.now();
    expect(now - typedAt).toBeGreaterThanOrEqual(GRACE);
    // Released by the grace, well before the max wait.
    expect(now - sentAt).toBeLessThan(MAX_WAIT - 300);
    expect(batch.items.map((i) => i.sourceId)).toEqual([first]);
    expect(batch.compiledContent).toBe('hello');
    await d.completeOk(batch.batchId, W);
  });

  it('seals at the max wait even while messages keep coming faster than the debounce', async () => {
    // A loaded machine can answer one message late enough (a POST over 800 ms) to leave a gap
    // longer than the debounce, and then the debounce seals first, as it should. Each round is
    // checked against its own inputs' times (the service's clock); a round that had such a gap
    // is run again, and the max wait must seal one of three.
    for (let round = 1; ; round++) {
      if ((await sealRound()) === 'max wait') return;
      if (round === 3) throw new Error('three rounds each had a gap over the debounce: the max wait went untested');
    }
  });

  it(
    'rule 2: inputs arriving while a batch is leased accumulate and are sealed together after it ' + 'completes',
    async () => {
      const { chat, b1 } = await leasedFirst(30_000);
      // Two inputs further apart than the debounce: without rule 2 they would be two batches.
      const m2 = await d.say(chat.id, 'second');
      // Kept (time is the behavior): past the batch debounce.
      await sleep(DEBOUNCE + 500);
      const m3 = await d.say(chat.id, 'third');
      // Kept (time is the behavior): past the batch debounce.
      await sleep(DEBOUNCE + 500);
      await d.claimNone({ workerId: 'worker-2', waitMs: 0 });
      await d.completeOk(b1.batchId, W);
      const b2 = await d.claimOne({ workerId: 'worker-2', waitMs: 5000 });
      expect(b2.items.map((i) => i.sourceId)).toEqual([m2, m3]);
      expect(b2.compiledContent).toBe(blocks(['second', 'third']));
      await d.completeOk(b2.batchId, 'worker-2');
      await d.claimNone({ workerId: 'worker-2', waitMs: DEBOUNCE + 500 });
    },
  );

  it(
    'rule 2 ends when the leased batch goes back to pending for a retry: inputs seal on their own debounce ' + 'again',
    async () => {
      const { chat, b1 } = await leasedFirst(30_000);
      const m2 = await d.say(chat.id, 'second');
      // m2's debounce passes while b1 is leased: rule 2 holds it.
      // Kept (time is the behavior): past the batch debounce.
      await sleep(DEBOUNCE + 700);
      // The lease ends (retry in 5 s): the chat has no leased batch, so m2 is eligible at once.
      await d.failOk(b1.batchId, { workerId: W, reason: 'busy', retryable: true, retryDelayMs: 5000 });
      // Kept (time is the behavior): past the batch debounce.
      await sleep(DEBOUNCE + LATE);
      // m3 comes after m2 was due to be sealed: it is a batch of its own.
      const m3 = await d.say(chat.id, 'third');
      const retried = await d.claimOne({ workerId: 'worker-2', waitMs: 8000 });
      expect(retried.batchId).toBe(b1.batchId);
      await d.completeOk(retried.batchId, 'worker-2');
      expect(await drainedGroups()).toEqual([[m2], [m3]]);
    },
  );

  it('rule 2 ends when the lease expires: inputs held by it are sealed then, before later ones arrive', async () => {
    const { chat, b1 } = await leasedFirst(2000);
    const m2 = await d.say(chat.id, 'second');
    // Past the lease's end and m2's debounce: m2 is sealed on its own.
    // Kept (time is the behavior): past the typing grace.
    await sleep(2000 + LATE);
    const m3 = await d.say(chat.id, 'third');
    const again = await d.claimOne({ workerId: 'worker-2', waitMs: 5000, leaseMs: 20_000 });
    expect(again.batchId).toBe(b1.batchId);
    await d.completeOk(again.batchId, 'worker-2');
    expect(await drainedGroups()).toEqual([[m2], [m3]]);
  });

  it('rule 2 also holds across a terminal failure: the accumulated inputs are sealed together after it', async () => {
    const { chat, b1 } = await leasedFirst(30_000);
    const m2 = await d.say(chat.id, 'second');
    // Kept (time is the behavior): past the batch debounce.
    await sleep(DEBOUNCE + 500);
    const m3 = await d.say(chat.id, 'third');
    // Kept (time is the behavior): past the batch debounce.
    await sleep(DEBOUNCE + 500);
    await d.failOk(b1.batchId, { workerId: W, reason: 'agent down', retryable: false });
    await d.takeBatchOf([m2, m3], { workerId: 'worker-2', waitMs: 5000 });
    // The failure's system message is not an input.
    await d.claimNone({ workerId: 'worker-2', waitMs: DEBOUNCE + 500 });
  });
});
