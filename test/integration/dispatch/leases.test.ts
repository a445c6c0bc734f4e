/**
 * Leases and claims (contract §4.4.4, §4.4.7, §5.11, §11, §13 item 3) in sequential mode:
 * heartbeats, lease expiry and takeover, the minimum lease, the long-poll (idle waits, the
 * default wait, the 25 s cap, early wake-up), claim-many limits, and body validation. A claim
 * whose client leaves during the wait: claim-client-gone.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { rehearsalAssembly } from '../../support/api.js';
import { LATE, QUICK_RETRIES, configWith, dispatchApi, expectLeaseLost, expectSchemaError, sleep } from './support.js';

/**
 * This file's claimWaitMs: apart from every waitMs the first test sends, and from an answer "at
 * once" by more than a loaded machine's request time (a waitMs 0 answered in 1,164 ms once, in a
 * clean clone's first minutes, where this was 1.5 s and "at once" 500 ms).
 */
const CLAIM_WAIT = 5000;
/**
 * How late an empty long-poll may answer here: a full run keeps both cores busy (seen: 1,176 ms
 * late; 1,522 ms in a clean clone's first minutes, beside the infra synths and the crash files).
 * Still far under what the bounds are there to catch: a claim that ignored this file's
 * claimWaitMs for the default (10 s) or waited past its waitMs to the longest (25 s).
 */
const POLL_SLACK_MS = 2500;

const config = configWith({
  mode: 'sequential',
  leaseMs: 30_000,
  claimWaitMs: CLAIM_WAIT,
  ...QUICK_RETRIES,
  maxAttempts: 2,
  claim: { claimManyLimit: 3 },
});

const { api, d } = dispatchApi(config);

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const out = await f();
  return [out, Date.now() - started];
}

describe('claim long-poll', () => {
  it(
    'answers 204 with an empty body after about waitMs on an idle instance; waitMs 0 answers at once; no waitMs ' +
      'waits claimWaitMs',
    async () => {
      // The first request of a file loads the handler: warm up before timing.
      expect((await d.claim({ workerId: 'w1', waitMs: 0 })).status).toBe(204);
      const [now, nowMs] = await timed(() => d.claim({ workerId: 'w1', waitMs: 0 }));
      expect(now.status).toBe(204);
      expect(now.text).toBe('');
      // A waitMs 0 taken for "none" would wait CLAIM_WAIT.
      expect(nowMs).toBeLessThan(POLL_SLACK_MS);

      const [waited, waitedMs] = await timed(() => d.claim({ workerId: 'w1', waitMs: 2000 }));
      expect(waited.status).toBe(204);
      expect(waited.text).toBe('');
      expect(waitedMs).toBeGreaterThanOrEqual(1950);
      expect(waitedMs).toBeLessThan(2000 + POLL_SLACK_MS);

      const [byDefault, byDefaultMs] = await timed(() => d.claim({ workerId: 'w1' }));
      expect(byDefault.status).toBe(204);
      expect(byDefaultMs).toBeGreaterThanOrEqual(CLAIM_WAIT - 50);
      expect(byDefaultMs).toBeLessThan(CLAIM_WAIT + POLL_SLACK_MS);

      const [many, manyMs] = await timed(() => d.claimMany({ workerId: 'w1', waitMs: 1200 }));
      expect(many.status).toBe(204);
      expect(many.text).toBe('');
      expect(manyMs).toBeGreaterThanOrEqual(1150);
      expect(manyMs).toBeLessThan(1200 + POLL_SLACK_MS);
    },
  );

  it('wakes up early when a batch appears during the wait', async () => {
    const chat = await d.newChat();
    const started = Date.now();
    // A wait far longer than the message's POST may take on a loaded machine (4 s once; a clean
    // clone's busiest minute once outlasted an 8 s wait), so that the batch comes during it.
    const pending = d.claim({ workerId: 'w1', waitMs: 20_000 });
    // Kept (time is the behavior): the batch appears during the claim's wait.
    await sleep(800);
    const id = await d.say(chat.id, 'wake up');
    const sentAt = Date.now();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(res.body.items.map((i) => i.sourceId)).toEqual([id]);
    expect(Date.now() - sentAt).toBeLessThan(LATE);
    // Before its wait ran out: a claim that slept through it answers 20 s or more after it was sent
    // (after `started`).
    expect(Date.now() - started).toBeLessThan(20_000 - 500);
    await d.completeOk(res.body.batchId, 'w1');
  });

  it('caps a waitMs above 25 s at about 25 s (§13 item 3)', async () => {
    // Taken over HTTP (no 400), and woken by a batch as any wait is.
    const chat = await d.newChat();
    const pending = d.claim({ workerId: 'w1', waitMs: 60_000 });
    // Kept (time is the behavior): the batch appears during the claim's wait.
    await sleep(500);
    const id = await d.say(chat.id, 'a long wait');
    const woken = await pending;
    expect(woken.status).toBe(200);
    expect(woken.body.items.map((i) => i.sourceId)).toEqual([id]);
    await d.completeOk(woken.body.batchId, 'w1');

    if (rehearsalAssembly()) {
      // A deployment's functions keep their own clock: the 25 s are waited out.
      const [res, ms] = await timed(() => d.claim({ workerId: 'w1', waitMs: 60_000 }));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(ms).toBeGreaterThanOrEqual(20_000);
      expect(ms).toBeLessThanOrEqual(26_500);
      return;
    }
    // The cap on the clock the claim takes (core/dispatch/deps.ts): the claim, in this process on
    // the file's table and queue, sets its deadline at the clock's first reading, and the clock then
    // jumps 24 s. Capped, the deadline is a second away: the claim ends at 25 s on that clock, about a
    // second of real time later. Uncapped (60 s away), it would long-poll the queue for 20 s, then
    // 16 s more, and end at 60 s on it.
    const { claim } = await import('../../../functions/core/dispatch/claim.js');
    const { defaultDeps } = await import('../../../functions/core/dispatch/deps.js');
    const { getConfig } = await import('../../../functions/core/instance-config.js');
    const JUMP_MS = 24_000;
    let readings = 0;
    const clock = () => new Date(Date.now() + (readings++ === 0 ? 0 : JUMP_MS));
    const config = await getConfig();
    const startedAt = Date.now();
    const claimed = await claim(config, { workerId: 'w1', waitMs: 60_000 }, 1, { ...defaultDeps, clock });
    const onClock = clock().getTime() - startedAt;
    expect(claimed).toEqual([]);
    expect(onClock).toBeGreaterThanOrEqual(25_000);
    expect(onClock).toBeLessThanOrEqual(26_500);
    expect(Date.now() - startedAt).toBeLessThan(JUMP_MS);
  });
});

describe('leases', () => {
  it('heartbeat extends the lease past its original end; another worker gets 409; unknown batches 404', async () => {
    // Unknown batches first: on a deployment each route is a function of its own, and these first
    // calls start the heartbeat's and the completion's (a cold start is not to eat the short lease).
    const unknown = await d.heartbeat('AAAAAAAAAAAAAAAAAAAAA', { workerId: 'w1' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ code: 'NOT_FOUND', message: 'Dispatch batch not found.', details: null });
    const unknownComplete = await d.complete('AAAAAAAAAAAAAAAAAAAAA', 'w1');
    expect(unknownComplete.status).toBe(404);
    expect(unknownComplete.body.error).toEqual({
      code: 'NOT_FOUND',
      message: 'Dispatch batch not found.',
      details: null,
    });
    const { batch } = await d.claimNewMessage('long job', { workerId: 'w1', waitMs: 3000, leaseMs: 3000 });
    const claimedAt = Date.now();
    // At once, to 8 s from now: the heartbeat has the whole 3 s lease to land in (the claim's answer
    // and the heartbeat took over 1.5 s together in a clean clone's busiest minute, 409), and the
    // lease then runs about 4 s past the check below (a 4 s one left 1.7 s, too little once).
    const hb = await d.heartbeat(batch.batchId, { workerId: 'w1', extendMs: 8000 });
    expect(hb.status).toBe(204);
    expect(hb.text).toBe('');
    expectLeaseLost(await d.heartbeat(batch.batchId, { workerId: 'w2', extendMs: 3000 }), batch.batchId, 'w2');
    expectLeaseLost(await d.complete(batch.batchId, 'w2'), batch.batchId, 'w2');
    // Past the original 3 s: still held, nobody else can claim it.
    // Kept (time is the behavior): past the original lease.
    await sleep(Math.max(0, claimedAt + 3800 - Date.now()));
    await d.claimNone({ workerId: 'w2', waitMs: 0 });
    expect((await d.heartbeat(batch.batchId, { workerId: 'w1', extendMs: 3000 })).status).toBe(204);
    await d.completeOk(batch.batchId, 'w1');
    // A completed batch is leased to no one.
    expectLeaseLost(await d.heartbeat(batch.batchId, { workerId: 'w1' }), batch.batchId, 'w1');
    expectLeaseLost(
      await d.fail(batch.batchId, { workerId: 'w1', reason: 'late', retryable: false }),
      batch.batchId,
      'w1',
    );
  });

  it(
    'a worker that stops heartbeating loses the lease: 409 at once, and another claim gets the same ' + 'batch',
    async () => {
      const { chat, id: m1 } = await d.chatWithMessage('first');
      const m2 = await d.say(chat.id, 'second');
      const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 1000 });
      expect(batch.items.map((i) => i.sourceId)).toEqual([m1]);
      // Kept (time is the behavior): past the lease.
      await sleep(1300);
      // Expired, though nobody has claimed it again yet.
      expectLeaseLost(await d.heartbeat(batch.batchId, { workerId: 'w1' }), batch.batchId, 'w1');
      const [again, ms] = await timed(() => d.claimOne({ workerId: 'w2', waitMs: 4000, leaseMs: 10_000 }));
      expect(ms).toBeLessThan(LATE);
      // The same batch (not the chat's second one), with the same payload.
      expect(again.batchId).toBe(batch.batchId);
      expect(again.items).toEqual(batch.items);
      expectLeaseLost(await d.heartbeat(batch.batchId, { workerId: 'w1' }), batch.batchId, 'w1');
      expectLeaseLost(await d.complete(batch.batchId, 'w1'), batch.batchId, 'w1');
      expectLeaseLost(
        await d.fail(batch.batchId, { workerId: 'w1', reason: 'late', retryable: true }),
        batch.batchId,
        'w1',
      );
      expectLeaseLost(
        await d.fail(batch.batchId, { workerId: 'w1', reason: 'late', retryable: false }),
        batch.batchId,
        'w1',
      );
      await d.completeOk(batch.batchId, 'w2');
      await d.takeBatchOf([m2], { workerId: 'w2', waitMs: 3000 });
      // The old worker's failures wrote no system message.
      const messages = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data as any[];
      expect(messages.map((m) => m.role)).toEqual(['user', 'user']);
    },
  );

  it('a waiting claim takes over an expired lease within about one tick', async () => {
    await d.chatWithMessage('takeover');
    // The lease runs from the service's claim, which comes after this and before the answer.
    const sentAt = Date.now();
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 1000 });
    const claimedAt = Date.now();
    const again = await d.claimOne({ workerId: 'w2', waitMs: 5000 });
    expect(again.batchId).toBe(batch.batchId);
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - claimedAt).toBeLessThan(1000 + LATE);
    await d.completeOk(again.batchId, 'w2');
  });

  it('a lease that is not a whole number of seconds is claimable again once it ends, not at the next whole second (§11)', async () => {
    // A claim that waits at most 300 ms, sent 300 ms after the lease's end, takes the batch: a
    // lease held to whole seconds (2 s for 1100 ms) would still hide it. Under load the claim may
    // land later, which can only pass here (measured as a waiting claim's pick-up time instead,
    // the bound of 1.8 s failed at 2.8 s under four jest workers); the quiet run catches the rounding.
    await d.chatWithMessage('odd lease');
    // Claimed with 1100 ms: expires 1100 ms after the claim (which answered before claimedAt).
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 1100 });
    const claimedAt = Date.now();
    // Kept (time is the behavior): the lease's end.
    await sleep(Math.max(0, claimedAt + 1400 - Date.now()));
    const again = await d.claimOne({ workerId: 'w2', waitMs: 300, leaseMs: 20_000 });
    // Extended by a heartbeat to 1100 ms from now: the same again.
    expect((await d.heartbeat(again.batchId, { workerId: 'w2', extendMs: 1100 })).status).toBe(204);
    const extendedAt = Date.now();
    // Kept (time is the behavior): the extended lease's end.
    await sleep(Math.max(0, extendedAt + 1400 - Date.now()));
    const third = await d.claimOne({ workerId: 'w3', waitMs: 300 });
    await d.completeOk(third.batchId, 'w3');
    expect([again.batchId, third.batchId]).toEqual([batch.batchId, batch.batchId]);
  });

  it('leaseMs and extendMs below 1000 give a 1000 ms lease', async () => {
    const { chat } = await d.chatWithMessage('short');
    await d.say(chat.id, 'shorter');
    // leaseMs 0: still held right after the claim, lost after about a second. (The pauses are short:
    // each request of a loaded machine's first minutes may take much of the one second.)
    const b1 = await d.claimOne({ workerId: 'w1', waitMs: 3000, leaseMs: 0 });
    // Kept (time is the behavior): still inside the lease.
    await sleep(100);
    // The renewed lease runs from the service's heartbeat, which comes after this.
    const heartbeatAt = Date.now();
    expect((await d.heartbeat(b1.batchId, { workerId: 'w1', extendMs: 0 })).status).toBe(204);
    // Kept (time is the behavior): inside the lease the heartbeat renewed (a 0 ms one would be over).
    await sleep(200);
    await d.claimNone({ workerId: 'w2', waitMs: 0 });
    const again = await d.claimOne({ workerId: 'w2', waitMs: 4000, leaseMs: 20_000 });
    expect(again.batchId).toBe(b1.batchId);
    expect(Date.now() - heartbeatAt).toBeGreaterThanOrEqual(1000);
    // extendMs shortens a long lease to max(1000, extendMs) from now.
    expect((await d.heartbeat(again.batchId, { workerId: 'w2', extendMs: 10 })).status).toBe(204);
    // Kept (time is the behavior): past the lease.
    await sleep(1300);
    expectLeaseLost(await d.complete(again.batchId, 'w2'), again.batchId, 'w2');
    const third = await d.claimOne({ workerId: 'w3', waitMs: 3000 });
    expect(third.batchId).toBe(b1.batchId);
    await d.completeOk(third.batchId, 'w3');
    const next = await d.claimOne({ workerId: 'w3', waitMs: 3000 });
    expect(next.compiledContent).toBe('shorter');
    await d.completeOk(next.batchId, 'w3');
  });

  it('expiry never makes a batch terminal, even past maxAttempts; the expired attempts stay counted', async () => {
    const { chat, batch: b1 } = await d.claimNewMessage('slow', { workerId: 'w1', waitMs: 3000, leaseMs: 1000 });
    const b2 = await d.claimOne({ workerId: 'w2', waitMs: 4000, leaseMs: 1000 });
    expect(b2.batchId).toBe(b1.batchId);
    // attempt 3 > maxAttempts 2: expiry does not check it.
    const b3 = await d.claimOne({ workerId: 'w3', waitMs: 4000, leaseMs: 10_000 });
    expect(b3.batchId).toBe(b1.batchId);
    await d.failOk(b3.batchId, { workerId: 'w3', reason: 'too slow', retryable: true });
    const messages = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data as any[];
    expect(messages[0]).toMatchObject({
      role: 'system',
      content_final: 'Dispatch failed after 3 attempts: too slow',
      trace: { dispatchFailure: true },
    });
  });
});

describe('claim-many', () => {
  it('returns up to the limit, capped at claimManyLimit, never two batches of one chat', async () => {
    const a = await d.newChat();
    const aIds = [await d.say(a.id, 'a1'), await d.say(a.id, 'a2'), await d.say(a.id, 'a3')];
    const firsts = new Map<string, string>([[a.id, aIds[0]!]]);
    for (let i = 0; i < 4; i++) {
      const chat = await d.newChat();
      firsts.set(chat.id, await d.say(chat.id, `only ${i}`));
    }
    const held: { batchId: string; workerId: string }[] = [];
    const take = async (limit: number | undefined, workerId: string) => {
      const res = await d.claimMany({ workerId, waitMs: 2000, ...(limit === undefined ? {} : { limit }) });
      expect(res.status).toBe(200);
      for (const b of res.body.batches) held.push({ batchId: b.batchId, workerId });
      return res.body.batches;
    };
    // limit 10 is capped at claimManyLimit 3.
    const first = await take(10, 'w1');
    expect(first).toHaveLength(3);
    const second = await take(1, 'w2');
    expect(second).toHaveLength(1);
    // Default limit = claimManyLimit; only one chat's batch is left claimable.
    const third = await take(undefined, 'w3');
    expect(third).toHaveLength(1);
    const all = [...first, ...second, ...third];
    // One batch per chat, and each is its chat's oldest.
    expect(new Set(all.map((b) => b.chatId)).size).toBe(5);
    for (const b of all) expect(b.items.map((i) => i.sourceId)).toEqual([firsts.get(b.chatId)]);
    // a2 and a3 wait behind a1.
    const none = await d.claimMany({ workerId: 'w4', waitMs: 500 });
    expect(none.status).toBe(204);
    for (const h of held) await d.completeOk(h.batchId, h.workerId);
    const rest = await d.claimMany({ workerId: 'w4', waitMs: 2000, limit: 3 });
    expect(rest.status).toBe(200);
    expect(rest.body.batches.map((b) => b.items[0]!.sourceId)).toEqual([aIds[1]]);
    await d.completeOk(rest.body.batches[0]!.batchId, 'w4');
    const last = await d.claimMany({ workerId: 'w4', waitMs: 2000 });
    expect(last.body.batches.map((b) => b.items[0]!.sourceId)).toEqual([aIds[2]]);
    await d.completeOk(last.body.batches[0]!.batchId, 'w4');
  });
});

describe('Idempotency-Key on dispatch (§1.10)', () => {
  it('does not store an empty claim; replays a successful one without claiming again', async () => {
    const key = { headers: { 'Idempotency-Key': 'dispatch-claim-key' } };
    const body = { workerId: 'w1', waitMs: 1000, leaseMs: 20_000 };
    const empty = await api.post('/api/v1/dispatch/claim', body, key);
    expect(empty.status).toBe(204);
    const a = await d.newChat();
    await d.say(a.id, 'for a');
    const b = await d.newChat();
    await d.say(b.id, 'for b');
    // The key was released by the empty claim: this one runs.
    const first = await api.post('/api/v1/dispatch/claim', body, key);
    expect(first.status).toBe(200);
    const replay = await api.post('/api/v1/dispatch/claim', body, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    // The replay claimed nothing: exactly one other batch is left.
    const other = await d.claimOne({ workerId: 'w2', waitMs: 1000 });
    expect(other.chatId).not.toBe(first.body.chatId);
    await d.claimNone({ workerId: 'w2', waitMs: 500 });
    // A retried complete replays its 204 instead of answering 409.
    const completeKey = { headers: { 'Idempotency-Key': 'dispatch-complete-key' } };
    expect(
      (await api.post(`/api/v1/dispatch/${first.body.batchId}/complete`, { workerId: 'w1' }, completeKey)).status,
    ).toBe(204);
    expect(
      (await api.post(`/api/v1/dispatch/${first.body.batchId}/complete`, { workerId: 'w1' }, completeKey)).status,
    ).toBe(204);
    await d.completeOk(other.batchId, 'w2');
  });

  it('does not store an empty claim-many', async () => {
    const key = { headers: { 'Idempotency-Key': 'dispatch-claim-many-key' } };
    const body = { workerId: 'w1', waitMs: 1000, limit: 2 };
    expect((await api.post('/api/v1/dispatch/claim-many', body, key)).status).toBe(204);
    const { id } = await d.chatWithMessage('now there is work');
    const res = await api.post('/api/v1/dispatch/claim-many', body, key);
    expect(res.status).toBe(200);
    expect(res.body.batches.map((x: any) => x.items[0].sourceId)).toEqual([id]);
    await d.completeOk(res.body.batches[0].batchId, 'w1');
  });
});

describe('request validation', () => {
  it('rejects bad claim and claim-many bodies with schema errors', async () => {
    for (const path of ['/api/v1/dispatch/claim', '/api/v1/dispatch/claim-many']) {
      expectSchemaError(await api.post(path, {}), 'workerId');
      expectSchemaError(await api.post(path, { workerId: '' }), 'workerId');
      expectSchemaError(await api.post(path, { workerId: 7 }), 'workerId');
      expectSchemaError(await api.post(path, { workerId: 'w', leaseMs: -1, waitMs: 0 }), 'leaseMs');
      expectSchemaError(await api.post(path, { workerId: 'w', leaseMs: 1.5, waitMs: 0 }), 'leaseMs');
      expectSchemaError(await api.post(path, { workerId: 'w', waitMs: -1 }), 'waitMs');
      expectSchemaError(await api.post(path, { workerId: 'w', waitMs: '100' }), 'waitMs');
    }
    expectSchemaError(await d.claimMany({ workerId: 'w', waitMs: 0, limit: 0 }), 'limit');
    expectSchemaError(await api.post('/api/v1/dispatch/claim-many', { workerId: 'w', waitMs: 0, limit: 2.5 }), 'limit');
  });

  it('rejects bad heartbeat and complete bodies with schema errors', async () => {
    await d.chatWithMessage('validate');
    const batch = await d.claimOne({ workerId: 'w1', waitMs: 3000 });
    expectSchemaError(await d.heartbeat(batch.batchId, {}), 'workerId');
    expectSchemaError(await d.heartbeat(batch.batchId, { workerId: '' }), 'workerId');
    expectSchemaError(await d.heartbeat(batch.batchId, { workerId: 'w1', extendMs: -1 }), 'extendMs');
    expectSchemaError(await api.post(`/api/v1/dispatch/${batch.batchId}/complete`, {}), 'workerId');
    expectSchemaError(await api.post(`/api/v1/dispatch/${batch.batchId}/complete`, { workerId: '' }), 'workerId');
    await d.completeOk(batch.batchId, 'w1');
  });
});
