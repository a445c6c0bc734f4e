/**
 * Deadlines firing (contract §5.5.6): expiry (cancel, or resolve with the default by `backend`),
 * `expired_at`, `reason: "deadline"` on the closing event, the count, the dispatch input and the
 * decision entry; reminders as `request.reminder` events, once each; timers withdrawn when the
 * deadline changes or goes; the race between a person's answer and the deadline (exactly one
 * closing, one event, one decision entry); the sweep that expires an overdue request whose timer
 * was lost. The first block waits out real 10-12 s deadlines (the local runtime's timers, at most
 * 1 s late); the rest hand the timer's record to its handler directly, at the time it falls due.
 */
import { describe, expect, it } from '@jest/globals';
import { getConfig } from '../../../functions/core/instance-config.js';
import { fireOverdueTimers, fireRequestTimer } from '../../../functions/core/request-expiry.js';
import { installRequestTimers, soonestTimer } from '../../../functions/platform/request-timer.js';
import type { RequestTimer } from '../../../functions/platform/request-timer.js';
import { callsDuring } from '../../support/ddb-calls.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { eventually } from '../../support/wait.js';
import { sleep } from '../../../functions/platform/retry.js';
import { choiceBody, requestsApi, ruleError } from './support.js';

const { api, h } = requestsApi();

const expiryOf = (request: any): RequestTimer => ({
  requestId: request.id,
  kind: 'expire',
  at: request.deadline.at,
  fireAtMs: Date.parse(request.deadline.at),
});
const reminderOf = (request: any, before: number): RequestTimer => ({
  requestId: request.id,
  kind: 'remind',
  at: request.deadline.at,
  before,
  fireAtMs: Date.parse(request.deadline.at) - before * 1000,
});
/** Runs a timer's record as the flush consumer would, at the time it falls due. */
const fire = async (timer: RequestTimer) => fireRequestTimer(await getConfig(), timer, timer.fireAtMs);

/**
 * Installs a starter that behaves as the queue's (platform/request-timer.ts: only the soonest of
 * the timers it is given is set, a chain) and records what it would send; nothing fires them.
 * Returns the records and the local runtime's starter, to put back after.
 */
function queueLikeTimers() {
  const sent: RequestTimer[] = [];
  const local = installRequestTimers({
    arm: async (timers) => {
      sent.push(soonestTimer(timers));
    },
    withdraw: () => {},
    chained: true,
  });
  return { sent, local };
}

const decisions = async (): Promise<any[]> => {
  const res = await api.get('/api/v1/decisions?limit=500');
  expect(res.status).toBe(200);
  return res.body.data;
};
const eventsOf = async (requestId: string) =>
  (await readEvents(api.tableName)).filter((e) => e.payload.requestId === requestId);

describe('on real timers (at most 1 s late locally)', () => {
  it('cancels, resolves with the default, reminds, and leaves a changed or removed deadline alone', async () => {
    const chat = await h.newChat();
    const chatBefore = await h.getChat(chat.id);
    const cancelling = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 10, remindBeforeSeconds: [8] } }));
    const resolving = await h.create(
      chat.id,
      choiceBody({ deadline: { inSeconds: 10, onExpiry: 'resolve', default: { selectedOptionIds: ['later'] } } }),
    );
    const moved = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 10, remindBeforeSeconds: [8] } }));
    const removed = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 10 } }));
    expect((await h.patch(moved.id, { deadline: { inSeconds: 3600 } })).status).toBe(200);
    expect((await h.patch(removed.id, { deadline: null })).status).toBe(200);
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(chatBefore.pending_requests_count + 4);

    // The reminder, 8 s before the deadline.
    const [reminder] = await eventually(
      async () => (await eventsOf(cancelling.id)).filter((e) => e.type === 'request.reminder'),
      (found) => found.length === 1,
      { timeoutMs: 8_000, what: 'the reminder' },
    );
    expect(reminder!.payload).toEqual({
      chatId: chat.id,
      requestId: cancelling.id,
      type: 'choice',
      title: 'Approve deploy?',
      deadlineAt: cancelling.deadline.at,
      secondsLeft: 8,
    });
    const remindLate = Date.parse(reminder!.timestamp) - (Date.parse(cancelling.deadline.at) - 8000);
    expect(remindLate).toBeGreaterThanOrEqual(0);
    expect(remindLate).toBeLessThan(1000);

    const closed = await eventually(
      async () => [await h.find(chat.id, cancelling.id), await h.find(chat.id, resolving.id)],
      (rs) => rs.every((r) => r.status !== 'pending'),
      { timeoutMs: 15_000, what: 'both expiries' },
    );
    const [cancelled, resolved] = closed as [any, any];
    expect(cancelled).toEqual({ ...cancelling, status: 'cancelled', expired_at: expect.any(String) });
    expect(resolved).toEqual({
      ...resolving,
      status: 'resolved',
      resolved_at: resolved.expired_at,
      resolved_by: 'backend',
      resolution_payload: { selectedOptionIds: ['later'] },
      expired_at: expect.any(String),
    });
    for (const r of [cancelled, resolved]) {
      const late = Date.parse(r.expired_at) - Date.parse(r.deadline.at);
      expect(late).toBeGreaterThanOrEqual(0);
      expect(late).toBeLessThan(1000);
    }
    // The closing events carry the reason.
    const cancelEvents = await eventsOf(cancelling.id);
    expect(cancelEvents.map((e) => e.type)).toEqual(['request.created', 'request.reminder', 'request.cancelled']);
    expect(cancelEvents[2]!.payload).toEqual({
      chatId: chat.id,
      requestId: cancelling.id,
      type: 'choice',
      status: 'cancelled',
      resolution_payload: null,
      trace: null,
      reason: 'deadline',
    });
    const resolveEvents = await eventsOf(resolving.id);
    expect(resolveEvents.map((e) => e.type)).toEqual(['request.created', 'request.resolved']);
    expect(resolveEvents[1]!.payload).toMatchObject({
      status: 'resolved',
      senderId: 'backend',
      resolutionPayload: { selectedOptionIds: ['later'] },
      reason: 'deadline',
    });
    // The resolution is a dispatch input from `backend`, as any resolve by the backend.
    const inputs = (await h.dispatchInputs(chat.id)).filter((i: any) => i.source_id === resolving.id);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ source_kind: 'request_resolved', sender_id: 'backend' });
    // One `expired` entry each, by the deadline (both fall due in the same millisecond or two:
    // their entries come in whichever order their closings took the log's head).
    const order = [cancelling.id, resolving.id];
    const entries = (await decisions())
      .filter((d) => order.includes(d.request_id))
      .sort((a, b) => order.indexOf(a.request_id) - order.indexOf(b.request_id));
    expect(entries.map((d) => [d.request_id, d.action, d.actor, d.resolved_by, d.payload])).toEqual([
      [cancelling.id, 'expired', 'deadline', null, null],
      [resolving.id, 'expired', 'deadline', 'backend', { selectedOptionIds: ['later'] }],
    ]);

    // The moved and the removed deadline fired nothing: still pending, no reminder, no closing.
    for (const r of [moved, removed]) {
      expect((await h.find(chat.id, r.id)).status).toBe('pending');
      expect((await eventsOf(r.id)).map((e) => e.type)).toEqual(['request.created']);
    }
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(chatBefore.pending_requests_count + 2);
  }, 30_000);
});

describe('a timer as its handler runs it', () => {
  it('does nothing for a closed request, a changed or removed deadline, or an unknown request', async () => {
    const chat = await h.newChat();
    const closed = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [60] } }));
    expect((await h.cancel(closed.id)).status).toBe(200);
    const changed = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [60] } }));
    const old = { expire: expiryOf(changed), remind: reminderOf(changed, 60) };
    expect((await h.patch(changed.id, { deadline: { inSeconds: 900, remindBeforeSeconds: [60] } })).status).toBe(200);
    const removed = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600 } }));
    const removedTimer = expiryOf(removed);
    expect((await h.patch(removed.id, { deadline: null })).status).toBe(200);

    const events = await h.eventCount();
    const entries = (await decisions()).length;
    for (const timer of [
      expiryOf(closed),
      reminderOf(closed, 60),
      old.expire,
      old.remind,
      removedTimer,
      { ...removedTimer, requestId: 'no-such-request' },
    ]) {
      expect(await fire(timer)).toBe('stale');
    }
    // A reminder offset the deadline does not have.
    const current = await h.find(chat.id, changed.id);
    expect(await fire(reminderOf(current, 61))).toBe('stale');
    expect(await eventsSince(api.tableName, events)).toEqual([]);
    expect(await decisions()).toHaveLength(entries);
    expect((await h.find(chat.id, changed.id)).status).toBe('pending');
  });

  it('sends each reminder once, however often its record comes', async () => {
    const chat = await h.newChat();
    const request = await h.create(
      chat.id,
      choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [300, 60] } }),
    );
    const outcomes = await Promise.all([1, 2, 3].map(() => fire(reminderOf(request, 300))));
    expect(outcomes.sort()).toEqual(['reminded', 'stale', 'stale']);
    expect(await fire(reminderOf(request, 60))).toBe('reminded');
    expect(await fire(reminderOf(request, 60))).toBe('stale');
    const reminders = (await eventsOf(request.id)).filter((e) => e.type === 'request.reminder');
    expect(reminders.map((e) => e.payload.secondsLeft)).toEqual([300, 60]);
    // A new deadline may remind again.
    expect((await h.patch(request.id, { deadline: { inSeconds: 900, remindBeforeSeconds: [300] } })).status).toBe(200);
    expect(await fire(reminderOf(await h.find(chat.id, request.id), 300))).toBe('reminded');
  });

  it("in AWS a request's timers wait as one chain: each reminder that fires sets the next, a closed request ends it", async () => {
    const { sent, local } = queueLikeTimers();
    try {
      const chat = await h.newChat();
      const request = await h.create(
        chat.id,
        choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [300, 60] } }),
      );
      expect(sent).toEqual([reminderOf(request, 300)]);
      expect(await fire(reminderOf(request, 300))).toBe('reminded');
      expect(sent.slice(1)).toEqual([reminderOf(request, 60)]);
      // The same record again (SQS delivers at least once): nothing written, the chain still goes on.
      expect(await fire(reminderOf(request, 300))).toBe('stale');
      expect(sent.slice(2)).toEqual([reminderOf(request, 60)]);
      expect(await fire(reminderOf(request, 60))).toBe('reminded');
      expect(sent.slice(3)).toEqual([expiryOf(request)]);
      // Answered before its expiry: the chain's last record finds it closed and sets nothing more.
      expect((await h.cancel(request.id)).status).toBe(200);
      expect(await fire(expiryOf(request))).toBe('stale');
      // A reminder of a request closed meanwhile ends the chain too.
      const closed = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [300] } }));
      expect((await h.cancel(closed.id)).status).toBe(200);
      const before = sent.length;
      expect(await fire(reminderOf(closed, 300))).toBe('stale');
      expect(sent).toHaveLength(before);
    } finally {
      installRequestTimers(local);
    }
  });

  it('a timer that comes early waits again instead of firing (a long wait in 900 s hops)', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 3600 } }));
    const timer = expiryOf(request);
    expect(await fireRequestTimer(await getConfig(), timer, timer.fireAtMs - 900_000)).toBe('waiting');
    expect((await h.find(chat.id, request.id)).status).toBe('pending');
  });

  it("races a person's answer: exactly one closing, one event, one decision entry", async () => {
    const chat = await h.newChat();
    const rounds = 8;
    const requests = await Promise.all(
      Array.from({ length: rounds }, (_, i) =>
        h.create(
          chat.id,
          choiceBody({
            deadline:
              i % 2 === 0
                ? { inSeconds: 600 }
                : { inSeconds: 600, onExpiry: 'resolve', default: { selectedOptionIds: ['no'] } },
          }),
        ),
      ),
    );
    const countBefore = (await h.getChat(chat.id)).pending_requests_count;
    const entriesBefore = (await decisions()).length;
    const answers = await Promise.all(
      requests.map(async (r, i) => {
        const answerOnce = () => (i % 4 < 2 ? h.resolve(r.id, { selectedOptionIds: ['yes'] }) : h.cancel(r.id));
        const [answer, outcome] = await Promise.all([
          // As a client does: a 429 (closings take turns at the decision log's head; a loaded machine
          // can keep one waiting past its time for a write) is tried again.
          (async () => {
            for (;;) {
              const res = await answerOnce();
              if (res.status !== 429) return res;
              await sleep(Number(res.headers.get('retry-after') ?? 1) * 100);
            }
          })(),
          fire(expiryOf(r)),
        ]);
        return { r, answer, outcome };
      }),
    );
    for (const { r, answer, outcome } of answers) {
      const stored = await h.find(chat.id, r.id);
      if (answer.status === 200) {
        expect(outcome).toBe('stale');
        expect(stored.expired_at).toBeNull();
      } else {
        // The deadline won: the answer is the not-pending 400 with the status the expiry left.
        expect(outcome).toBe('expired');
        expect(answer.body.error).toEqual(
          ruleError(
            `Only pending requests can be ${answer.body.error.message.includes('resolved') ? 'resolved' : 'cancelled'}.`,
            {
              requestId: r.id,
              status: stored.status,
            },
          ),
        );
        expect(stored.expired_at).not.toBeNull();
      }
      const closings = (await eventsOf(r.id)).filter((e) => e.type !== 'request.created');
      expect(closings).toHaveLength(1);
      expect('reason' in closings[0]!.payload).toBe(stored.expired_at !== null);
    }
    const entries = (await decisions()).slice(entriesBefore);
    expect(entries.map((e) => e.request_id).sort()).toEqual(requests.map((r) => r.id).sort());
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(countBefore - rounds);
  });

  it('the sweep takes over lost timers: the latest reminder due, then the expiry; nothing else', async () => {
    // In AWS every timer record is lost here (a send that failed after the commit, a record
    // dead-lettered): the starter records what the queue's would send, nothing fires it. Far
    // deadlines (20 days), so that the other tests' requests are due at these times too and
    // only this test's are looked at.
    const { sent, local } = queueLikeTimers();
    const days20 = 20 * 86_400;
    const config = await getConfig();
    const grace = 30_000;
    const sweep = (atMs: number) => fireOverdueTimers(config, grace, atMs);
    const remindersOf = async (r: any) =>
      (await eventsOf(r.id)).filter((e) => e.type === 'request.reminder').map((e) => e.payload.secondsLeft);
    try {
      const chat = await h.newChat();
      const lost = await h.create(
        chat.id,
        choiceBody({ deadline: { inSeconds: days20, remindBeforeSeconds: [3600, 600] } }),
      );
      // Two hours later, the same reminders.
      const sleeper = await h.create(
        chat.id,
        choiceBody({ deadline: { inSeconds: days20 + 7200, remindBeforeSeconds: [3600, 600] } }),
      );
      const answered = await h.create(
        chat.id,
        choiceBody({ deadline: { inSeconds: days20, remindBeforeSeconds: [3600] } }),
      );
      const unset = await h.create(
        chat.id,
        choiceBody({ deadline: { inSeconds: days20, remindBeforeSeconds: [3600] } }),
      );
      expect((await h.cancel(answered.id)).status).toBe(200);
      expect((await h.patch(unset.id, { deadline: null })).status).toBe(200);
      const at = Date.parse(lost.deadline.at);
      const at2 = Date.parse(sleeper.deadline.at);

      // The file's other requests with deadlines are long due by then: taken first, none of these.
      await sweep(at - 3600_000 - 60_000);
      for (const r of [lost, sleeper]) expect(await remindersOf(r)).toEqual([]);
      // Inside the grace after the first reminder fell due: still its timer's.
      expect(await sweep(at - 3600_000 + grace - 1000)).toEqual({ expired: 0, reminded: 0 });
      // A minute after it: the sweep sends it, and in AWS sets the chain's next timer.
      sent.length = 0;
      expect(await sweep(at - 3600_000 + 60_000)).toEqual({ expired: 0, reminded: 1 });
      expect(await remindersOf(lost)).toEqual([3540]);
      expect(sent).toEqual([reminderOf(lost, 600)]);
      // Done: the reminder moved the request's mark on to its next timer, so the same sweep again
      // reads one empty page of the index and nothing else.
      const again = await callsDuring(async () => {
        expect(await sweep(at - 3600_000 + 60_000)).toEqual({ expired: 0, reminded: 0 });
      });
      expect(again.map((c) => c.split(' ')[0])).toEqual(['QueryCommand']);
      expect(await sweep(at - 600_000 + 45_000)).toEqual({ expired: 0, reminded: 1 });
      expect(await remindersOf(lost)).toEqual([3540, 555]);
      // After the deadline (and the grace): expired, as its timer would have; then nothing more.
      expect(await sweep(at + 40_000)).toEqual({ expired: 1, reminded: 0 });
      expect(await h.find(chat.id, lost.id)).toMatchObject({ status: 'cancelled', expired_at: expect.any(String) });
      expect(await sweep(at + 40_000)).toEqual({ expired: 0, reminded: 0 });

      // `sleeper`'s first reminder is lost and nobody sweeps until after its second fell due:
      // only the latest is sent (the first is past news), then its expiry.
      expect(await sweep(at2 - 600_000 + 45_000)).toEqual({ expired: 0, reminded: 1 });
      expect(await remindersOf(sleeper)).toEqual([555]);
      // Its first reminder's record, had it only been late, finds a later one sent: nothing.
      expect(await fire(reminderOf(sleeper, 3600))).toBe('stale');
      expect(await remindersOf(sleeper)).toEqual([555]);
      expect(await sweep(at2 + 31_000)).toEqual({ expired: 1, reminded: 0 });
      expect(await h.find(chat.id, sleeper.id)).toMatchObject({ status: 'cancelled', expired_at: expect.any(String) });

      // The answered request and the one whose deadline went had no timer left to take over.
      expect(await sweep(at2 + 86_400_000)).toEqual({ expired: 0, reminded: 0 });
      expect(await h.find(chat.id, answered.id)).toMatchObject({ status: 'cancelled', expired_at: null });
      expect(await h.find(chat.id, unset.id)).toMatchObject({ status: 'pending', deadline: null });
      for (const r of [answered, unset]) expect(await remindersOf(r)).toEqual([]);
    } finally {
      installRequestTimers(local);
    }
  });
});
