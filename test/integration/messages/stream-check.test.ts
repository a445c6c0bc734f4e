/**
 * The AWS path of the stream timers (functions/platform/stream-timer.ts, functions/jobs/check-stream.ts)
 * with server.streamTimeoutSeconds = 1. The stream checks ride on the dispatch flush queue: a new
 * stream's delayed check goes onto the local SQS emulator's flush queue (no local stream timers
 * installed), whose poller hands it, like every flush signal, to the flush queue's consumer
 * (functions/jobs/flush.ts) with real-shaped SQS events; the other tests hand that consumer
 * events of their own, mixing checks and flush signals. The state machine is Step Functions'
 * StartExecution, seen through a spy on the SDK client.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { SQSClient, SendMessageCommand } from '@aws-sdk/client-sqs';
import { ExecutionAlreadyExists, SFNClient } from '@aws-sdk/client-sfn';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { flushQueueRecord, handler as flushQueueConsumer } from '../../../functions/jobs/flush.js';
import { requestTimerMessage } from '../../../functions/platform/request-timer.js';
import type { RequestTimer } from '../../../functions/platform/request-timer.js';
import { MIN_LOOP_SECONDS } from '../../../functions/jobs/expire-stream.js';
import { logger } from '../../../functions/platform/logger.js';
import { CHECK_MARGIN_SECONDS, streamCheckMessage } from '../../../functions/platform/stream-timer.js';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { useApi } from '../../support/api.js';
import { FLUSH_QUEUE_NAME, sqsRecord } from '../../../local/invocations.js';
import { sleep } from '../../support/shapes.js';
import { eventually } from '../../support/wait.js';

const TIMEOUT_SECONDS = 1;
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  server: { streamTimeoutSeconds: TIMEOUT_SECONDS },
};
const STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:stream-timeouts';

// dispatch: the local SQS emulator, its flush queue and that queue's poller (the event source
// mapping's stand-in); no local stream timers, so the AWS starters run.
const api = useApi({ config, dispatch: true });

/**
 * For the tests whose stream must still be active when the consumer looks at it: a timeout that a
 * loaded machine does not outlast between the stream's last write and the check (1 s can lapse).
 */
const ACTIVE_TIMEOUT_SECONDS = 10;
const streamsStayActive = () => api.setConfig({ ...config, server: { streamTimeoutSeconds: ACTIVE_TIMEOUT_SECONDS } });
beforeAll(() => {
  api.setEnv({ STREAM_TIMEOUT_STATE_MACHINE_ARN: STATE_MACHINE_ARN });
});

/** Step Functions' client, answered by `answer` (the state machine is not emulated). */
function spyOnStepFunctions(
  answer: () => Promise<unknown> = async () => ({ executionArn: 'arn', startDate: new Date() }),
) {
  return jest.spyOn(SFNClient.prototype, 'send').mockImplementation(answer as never);
}
afterEach(() => {
  jest.restoreAllMocks();
});

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const startStream = async (chatId: string) =>
  (await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true })).body;

/** A record of the flush queue as Lambda's poller hands it over. */
const recordOf = (body: string): SQSRecord => sqsRecord({ Body: body }, FLUSH_QUEUE_NAME);
const eventOf = (...recs: SQSRecord[]): SQSEvent => ({ Records: recs });
const checkOf = (messageId: string) => recordOf(streamCheckMessage({ messageId, waitSeconds: 1 }).body);
const flushOf = (chatId: string) => recordOf(JSON.stringify({ chatId }));

const endsOf = async (before: number, messageId: string) =>
  (await eventsSince(api.tableName, before)).filter(
    (e) => e.type === 'message.streaming.complete' && e.payload.messageId === messageId,
  );

/**
 * Counts the DynamoDB calls whose input names every one of `names` (and makes them fail with
 * `fail`) until `stop()`.
 */
let watchers = 0;
function watchCalls(names: string[], options: { fail?: boolean } = {}) {
  const name = `watch-calls-${++watchers}`;
  let count = 0;
  ddb().middlewareStack.add(
    (next) => async (args) => {
      const input = JSON.stringify(args.input);
      if (names.every((n) => input.includes(n))) {
        count++;
        if (options.fail) throw new Error('simulated DynamoDB failure');
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { count: () => count, stop: () => void ddb().middlewareStack.remove(name) };
}

/**
 * Holds back the stream checks the routes send (answering SendMessage for them without sending),
 * so that only the events a test hands the consumer run; every other queue call goes through.
 */
function holdBackChecks() {
  const send = SQSClient.prototype.send;
  return jest.spyOn(SQSClient.prototype, 'send').mockImplementation(function (
    this: SQSClient,
    ...args: Parameters<SQSClient['send']>
  ) {
    const [command] = args;
    if (
      command instanceof SendMessageCommand &&
      flushQueueRecord(command.input.MessageBody ?? '')?.kind === 'stream check'
    )
      return Promise.resolve({ MessageId: 'held back', $metadata: {} });
    return send.apply(this, args);
  } as never);
}

describe('flush queue records', () => {
  it('tells a flush signal from a stream check by its body, and neither from anything else', () => {
    expect(flushQueueRecord(JSON.stringify({ chatId: 'c1' }))).toEqual({ kind: 'flush', chatId: 'c1' });
    expect(flushQueueRecord(streamCheckMessage({ messageId: 'm1', waitSeconds: 5 }).body)).toEqual({
      kind: 'stream check',
      messageId: 'm1',
    });
    for (const body of ['', 'not json', 'null', '[]', '"c1"', '{}', '{"chatId":7}', '{"messageId":null}']) {
      expect([body, flushQueueRecord(body)]).toEqual([body, undefined]);
    }
    // Both ids: not a record either side sends.
    expect(flushQueueRecord(JSON.stringify({ chatId: 'c1', messageId: 'm1' }))).toBeUndefined();
    // A request timer (§5.5.6) as functions/platform/request-timer.ts sends it, and malformed ones.
    const timer = { requestId: 'r1', kind: 'remind', at: '2026-01-01T00:00:00.000Z', before: 60, fireAtMs: 1 };
    const { body } = requestTimerMessage(timer as RequestTimer, 0);
    expect(flushQueueRecord(body)).toEqual({ kind: 'request timer', timer });
    for (const bad of [
      { ...timer, kind: 'ring' },
      { ...timer, kind: 'remind', before: undefined },
      { ...timer, requestId: 7 },
      { ...timer, fireAtMs: 'soon' },
    ]) {
      expect([bad, flushQueueRecord(JSON.stringify({ requestTimer: bad }))]).toEqual([bad, undefined]);
    }
    expect(flushQueueRecord(JSON.stringify({ requestTimer: timer, chatId: 'c1' }))).toBeUndefined();
  });

  it('caps the check delay at SQS maximum of 900 s, and comes a second after the timeout', () => {
    expect(streamCheckMessage({ messageId: 'm', waitSeconds: 60 })).toEqual({
      body: JSON.stringify({ messageId: 'm' }),
      delaySeconds: 60 + CHECK_MARGIN_SECONDS,
    });
    expect(streamCheckMessage({ messageId: 'm', waitSeconds: 3600 }).delaySeconds).toBe(900);
  });
});

describe('stream checks through the local flush queue', () => {
  it(
    'a new stream sends one check to the flush queue, whose consumer cancels the abandoned stream the timeout ' +
      '+ 1 s later without an execution; other messages send none',
    async () => {
      const sfn = spyOnStepFunctions();
      const sends = jest.spyOn(SQSClient.prototype, 'send');
      const chat = await newChat();
      const plain = await api.post(`/api/v1/chats/${chat.id}/messages`, {
        role: 'agent',
        senderId: 'assistant',
        content: 'not streamed',
      });
      expect(plain.status).toBe(201);
      const before = (await readEvents(api.tableName)).length;
      const msg = await startStream(chat.id);
      const createdAt = Date.now();
      const ends = await eventually(
        () => endsOf(before, msg.id),
        (found) => found.length > 0,
        { timeoutMs: 10_000, intervalMs: 100, what: 'the stream ended by its check' },
      );
      // Cancelled by the check (the local poller ran the flush queue's consumer), not before it was due.
      expect(ends.map((e) => e.payload.streamState)).toEqual(['cancelled']);
      expect(Date.parse(ends[0]!.timestamp) - createdAt).toBeGreaterThanOrEqual(
        (TIMEOUT_SECONDS + CHECK_MARGIN_SECONDS) * 1000 - 250,
      );
      expect(sfn).not.toHaveBeenCalled();
      const checks = sends.mock.calls
        .map(([command]) => command)
        .filter((command) => command instanceof SendMessageCommand)
        .map((command) => (command as SendMessageCommand).input)
        .filter((input) => flushQueueRecord(input.MessageBody ?? '')?.kind === 'stream check');
      expect(checks).toEqual([
        {
          QueueUrl: process.env.FLUSH_QUEUE_URL,
          MessageBody: JSON.stringify({ messageId: msg.id }),
          DelaySeconds: TIMEOUT_SECONDS + CHECK_MARGIN_SECONDS,
        },
      ]);
    },
    20_000,
  );
});

describe('the flush queue consumer, with stream checks (AWS path)', () => {
  beforeEach(() => {
    holdBackChecks();
  });
  afterEach(() => {
    api.setConfig(config);
  });

  it('a duplicated or redelivered check is harmless: one cancel event', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    await sleep(TIMEOUT_SECONDS * 1000 + 200); // kept (time is the behavior): the stream is overdue
    const results = await Promise.all([
      flushQueueConsumer(eventOf(checkOf(msg.id), checkOf(msg.id))),
      flushQueueConsumer(eventOf(checkOf(msg.id))),
    ]);
    expect(await flushQueueConsumer(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
    expect(results).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect((await endsOf(before, msg.id)).map((e) => e.payload.streamState)).toEqual(['cancelled']);
    expect(sfn).not.toHaveBeenCalled();
  });

  it('leaves a completed stream alone, and starts no execution', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const msg = await startStream(chat.id);
    await api.post(`/api/v1/messages/${msg.id}/complete`, { finalText: 'done' });
    const before = (await readEvents(api.tableName)).length;
    await sleep(TIMEOUT_SECONDS * 1000 + 200); // kept (time is the behavior): the stream is overdue
    expect(await flushQueueConsumer(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
    expect(await eventsSince(api.tableName, before)).toEqual([]);
    expect(sfn).not.toHaveBeenCalled();
  });

  it('hands a stream still active to the state machine: one execution named by the message id', async () => {
    streamsStayActive();
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const before = (await readEvents(api.tableName)).length;
    const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'still going' });
    expect(chunk.status).toBe(200);
    expect(await flushQueueConsumer(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
    expect(sfn).toHaveBeenCalledTimes(1);
    const command = sfn.mock.calls[0]![0] as unknown as {
      input: { stateMachineArn: string; name: string; input: string };
    };
    expect(command.constructor.name).toBe('StartExecutionCommand');
    expect({ ...command.input, input: undefined }).toEqual({
      stateMachineArn: STATE_MACHINE_ARN,
      name: msg.id,
      input: undefined,
    });
    const input = JSON.parse(command.input.input) as { messageId: string; waitSeconds: number; waitMs: number };
    // Overdue at the earliest a timeout after the chunk; the Wait state's floor applies.
    expect(input.messageId).toBe(msg.id);
    expect(input.waitSeconds).toBe(MIN_LOOP_SECONDS);
    expect(input.waitMs).toBeGreaterThan(0);
    expect(input.waitMs).toBeLessThanOrEqual(ACTIVE_TIMEOUT_SECONDS * 1000 + 1);
    // Nothing was cancelled.
    expect(await endsOf(before, msg.id)).toEqual([]);
  });

  it('takes an execution that exists already (a redelivered check) as started', async () => {
    streamsStayActive();
    spyOnStepFunctions(async () => {
      throw new ExecutionAlreadyExists({ message: 'Execution Already Exists', $metadata: {} });
    });
    const chat = await newChat();
    const msg = await startStream(chat.id);
    expect(await flushQueueConsumer(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
  });

  it('reports only the records whose check failed, so only they come back', async () => {
    streamsStayActive();
    spyOnStepFunctions(async () => {
      throw new Error('Rate exceeded');
    });
    const chat = await newChat();
    const active = await startStream(chat.id);
    const done = await startStream(chat.id);
    await api.post(`/api/v1/messages/${done.id}/complete`, { finalText: 'x' });
    const failing = checkOf(active.id);
    const out = await flushQueueConsumer(eventOf(checkOf(done.id), failing));
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
  });

  it('runs a check and a flush signal of one event each on its own: a failing check alone is reported', async () => {
    streamsStayActive();
    const sfn = spyOnStepFunctions(async () => {
      throw new Error('Rate exceeded');
    });
    const chat = await newChat();
    const active = await startStream(chat.id);
    const reads = watchCalls([chat.id, Keys.dispatchState(chat.id).sk]);
    const failing = checkOf(active.id);
    const out = await flushQueueConsumer(eventOf(flushOf(chat.id), failing)).finally(reads.stop);
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(sfn).toHaveBeenCalledTimes(1);
    // The flush ran: it read the chat's dispatch state.
    expect(reads.count()).toBeGreaterThan(0);
  });

  it('runs a check and a flush signal of one event each on its own: a failing flush alone is reported', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    await sleep(TIMEOUT_SECONDS * 1000 + 200); // kept (time is the behavior): the stream is overdue
    const failingChat = `FAILING${Date.now()}`;
    const failures = watchCalls([failingChat], { fail: true });
    const failing = flushOf(failingChat);
    const out = await flushQueueConsumer(eventOf(checkOf(msg.id), failing)).finally(failures.stop);
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
    expect(failures.count()).toBeGreaterThan(0);
    // The check beside it cancelled its abandoned stream.
    expect((await endsOf(before, msg.id)).map((e) => e.payload.streamState)).toEqual(['cancelled']);
    expect(sfn).not.toHaveBeenCalled();
  });

  it('drops a record of neither shape with a warning instead of retrying it; ignores an unknown message', async () => {
    const sfn = spyOnStepFunctions();
    const warn = jest.spyOn(logger, 'warn');
    const bodies = ['not json', '{}', '[]', JSON.stringify({ messageId: 42 }), JSON.stringify({ chatId: 7 })];
    const dropped = bodies.map(recordOf);
    const out = await flushQueueConsumer(eventOf(...dropped, checkOf('AAAAAAAAAAAAAAAAAAAAA')));
    expect(out).toEqual({ batchItemFailures: [] });
    expect(warn.mock.calls).toEqual(
      dropped.map((record) => [
        'flush queue: record that is not a flush signal, a stream check or a request timer dropped',
        { sqsMessageId: record.messageId },
      ]),
    );
    expect(sfn).not.toHaveBeenCalled();
  });
});
