/**
 * The local stand-in for the stream timers (local/stream-timers.ts) with substitute handlers:
 * the check's delay and SQS-shaped event (a record of the flush queue, which carries the checks
 * in AWS), redelivery of failed checks up to the queue's receive limit, one loop per message,
 * the loop's retries, and stop(). test/integration/messages/timeouts.test.ts runs the real ones.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { ExpireStreamInput, ExpireStreamOutput } from '../../functions/jobs/expire-stream.js';
import {
  CHECK_MARGIN_SECONDS,
  CHECK_MAX_RECEIVES,
  startStreamTimeoutLoop,
  startStreamTimer,
} from '../../functions/platform/stream-timer.js';
import { FLUSH_QUEUE_NAME } from '../../local/invocations.js';
import { EXPIRY_MAX_RUNS, startLocalStreamTimers } from '../../local/stream-timers.js';
import type { LocalStreamTimers, LocalStreamTimerOptions } from '../../local/stream-timers.js';

let timers: LocalStreamTimers | undefined;
/** The timers report failures on the console (as npm start shows them). */
let consoleErrors: ReturnType<typeof jest.spyOn>;
// The timers and their handlers run in this process with no I/O: the fake clock moves them (and
// Date.now) on, so the seconds of delay and margin under test cost no real time.
beforeEach(() => {
  jest.useFakeTimers();
  consoleErrors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
});
afterEach(() => {
  timers?.stop();
  timers = undefined;
  jest.restoreAllMocks();
  jest.useRealTimers();
});

/** Moves the fake clock on by `ms`, running the timers that fall due and the promises they start. */
const elapse = (ms: number) => jest.advanceTimersByTimeAsync(ms);

const start = (options: LocalStreamTimerOptions) => (timers = startLocalStreamTimers({ retryMs: 10, ...options }));

/** A check handler that records each call and answers with `answers` in turn (then success). */
function checks(...answers: ('fail' | 'throw' | 'ok')[]) {
  const calls: { at: number; event: SQSEvent }[] = [];
  const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    calls.push({ at: Date.now(), event });
    const answer = answers[calls.length - 1] ?? 'ok';
    if (answer === 'throw') throw new Error('DynamoDB throttled');
    return { batchItemFailures: answer === 'fail' ? [{ itemIdentifier: event.Records[0]!.messageId }] : [] };
  };
  return { calls, handler };
}

/** An expiry handler answering each run with the next of `answers` ('throw' or whether the stream is done). */
function expiries(...answers: (boolean | 'throw')[]) {
  const calls: ExpireStreamInput[] = [];
  const handler = async (input: ExpireStreamInput): Promise<ExpireStreamOutput> => {
    calls.push(input);
    const answer = answers[calls.length - 1] ?? true;
    if (answer === 'throw') throw new Error('DynamoDB throttled');
    return { messageId: input.messageId, done: answer, waitSeconds: 15, waitMs: 20 };
  };
  return { calls, handler };
}

async function until(check: () => boolean, ms = 3000): Promise<void> {
  for (let waited = 0; !check() && waited < ms; waited += 5) await elapse(5);
}

describe('local stream checks', () => {
  it('runs the check once, the timeout + 1 s after the start, with one flush-queue record naming it', async () => {
    const check = checks();
    start({ checkHandler: check.handler });
    const startedAt = Date.now();
    await startStreamTimer({ messageId: 'msg-1', waitSeconds: 0 });
    expect(timers!.pending()).toBe(1);
    await until(() => check.calls.length > 0);
    expect(check.calls).toHaveLength(1);
    expect(check.calls[0]!.at - startedAt).toBeGreaterThanOrEqual(CHECK_MARGIN_SECONDS * 1000 - 20);
    const [record, ...others] = check.calls[0]!.event.Records;
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      body: JSON.stringify({ messageId: 'msg-1' }),
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${FLUSH_QUEUE_NAME}`,
      attributes: { ApproximateReceiveCount: '1' },
    });
    await elapse(50);
    expect([check.calls.length, timers!.pending()]).toEqual([1, 0]);
  });

  it('runs a failed check again, as SQS redelivers it, at most the queue receive limit in all', async () => {
    const recovering = checks('throw', 'fail', 'ok');
    start({ checkHandler: recovering.handler });
    await startStreamTimer({ messageId: 'msg-2', waitSeconds: 0 });
    await until(() => recovering.calls.length >= 3);
    await elapse(100);
    expect(recovering.calls).toHaveLength(3);
    // Each delivery counts its receive, as SQS's ApproximateReceiveCount does.
    expect(recovering.calls.map((c) => c.event.Records[0]!.attributes.ApproximateReceiveCount)).toEqual([
      '1',
      '2',
      '3',
    ]);
    timers!.stop();

    const failing = checks(...Array<'fail'>(20).fill('fail'));
    start({ checkHandler: failing.handler });
    await startStreamTimer({ messageId: 'msg-3', waitSeconds: 0 });
    await until(() => failing.calls.length >= CHECK_MAX_RECEIVES);
    await elapse(150);
    expect([failing.calls.length, timers!.pending()]).toEqual([CHECK_MAX_RECEIVES, 0]);
    expect(consoleErrors).toHaveBeenCalledWith(
      'local stream check: given up (dead-lettered in AWS)',
      JSON.stringify({ messageId: 'msg-3' }),
    );
  });
});

describe('local stream-timeout loop', () => {
  it('waits the given milliseconds, runs the expiry until the stream is over, one loop per message', async () => {
    const expiry = expiries(false, true);
    start({ expireHandler: expiry.handler });
    await startStreamTimeoutLoop({ messageId: 'msg-4', waitSeconds: 15, waitMs: 20 });
    // A second start while it runs is a no-op (an execution is named by the message id).
    await startStreamTimeoutLoop({ messageId: 'msg-4', waitSeconds: 15, waitMs: 20 });
    expect(timers!.pending()).toBe(1);
    await until(() => expiry.calls.length >= 2);
    await elapse(60);
    expect(expiry.calls).toEqual([{ messageId: 'msg-4' }, { messageId: 'msg-4' }]);
    expect([...timers!.looped()]).toEqual(['msg-4']);
    expect(timers!.pending()).toBe(0);
  });

  it('retries a failed expiry as the task retrier does, then ends the loop (a later start begins anew)', async () => {
    const expiry = expiries(...Array<'throw'>(EXPIRY_MAX_RUNS).fill('throw'), true);
    start({ expireHandler: expiry.handler });
    await startStreamTimeoutLoop({ messageId: 'msg-5', waitSeconds: 15, waitMs: 1 });
    await until(() => expiry.calls.length >= EXPIRY_MAX_RUNS);
    await elapse(100);
    expect([expiry.calls.length, timers!.pending()]).toEqual([EXPIRY_MAX_RUNS, 0]);
    await startStreamTimeoutLoop({ messageId: 'msg-5', waitSeconds: 15, waitMs: 1 });
    await until(() => expiry.calls.length > EXPIRY_MAX_RUNS);
    expect(expiry.calls).toHaveLength(EXPIRY_MAX_RUNS + 1);
  });

  it('stop() drops every waiting timer: nothing runs afterwards', async () => {
    const check = checks();
    const expiry = expiries();
    start({ checkHandler: check.handler, expireHandler: expiry.handler });
    await startStreamTimer({ messageId: 'msg-6', waitSeconds: 0 });
    await startStreamTimeoutLoop({ messageId: 'msg-7', waitSeconds: 15, waitMs: 30 });
    expect(timers!.pending()).toBe(2);
    timers!.stop();
    expect(timers!.pending()).toBe(0);
    await elapse(CHECK_MARGIN_SECONDS * 1000 + 100);
    expect([check.calls.length, expiry.calls.length]).toEqual([0, 0]);
  });
});
