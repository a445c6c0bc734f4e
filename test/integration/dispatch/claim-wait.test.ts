/**
 * An empty claim's long-poll in SQS requests (core/dispatch/claim.ts longPollSeconds): the OpenClaw
 * pump's `waitMs` 10000 is one ReceiveMessage (SQS ends it 10 s later); a wait of 2.4 s is a
 * 2 s long-poll and then receives without waiting until the deadline (never early).
 * A spy on the SQS client counts the batch queue's receives and passes every call through.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { dispatchApi } from './support.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const { d } = dispatchApi(config);

let waits: number[] = [];
beforeEach(() => {
  waits = [];
  const send = SQSClient.prototype.send;
  jest.spyOn(SQSClient.prototype, 'send').mockImplementation(function (this: SQSClient, ...args: unknown[]) {
    const command = args[0];
    // The batch queue's receives only (the local flush queue's poller receives too).
    if (command instanceof ReceiveMessageCommand && command.input.QueueUrl?.endsWith('.fifo')) {
      waits.push(command.input.WaitTimeSeconds ?? 0);
    }
    return (send as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('an empty claim', () => {
  it('with waitMs 10000 (the OpenClaw pump) is one 10 s receive, answered 204 once the wait is over', async () => {
    const started = performance.now();
    const res = await d.claimMany({ workerId: 'pump', limit: 10, waitMs: 10_000 });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(204);
    expect(waits).toEqual([10]);
    expect(elapsed).toBeGreaterThanOrEqual(10_000);
    expect(elapsed).toBeLessThan(12_000);
  }, 20_000);

  it('with waitMs 2400 is a 2 s receive, then receives without waiting until the deadline', async () => {
    const started = performance.now();
    const res = await d.claim({ workerId: 'w', waitMs: 2_400 });
    const elapsed = performance.now() - started;
    expect(res.status).toBe(204);
    expect(waits[0]).toBe(2);
    expect(waits.length).toBeGreaterThan(1);
    expect(waits.slice(1).every((w) => w === 0)).toBe(true);
    expect(elapsed).toBeGreaterThanOrEqual(2_400);
  }, 20_000);
});
