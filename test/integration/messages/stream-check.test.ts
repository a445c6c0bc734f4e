/**
 * The AWS path of the stream timers (functions/platform/stream-timer.ts, functions/jobs/check-stream.ts)
 * with server.streamTimeoutSeconds = 1: a new stream's delayed check goes through the local SQS
 * emulator (no local timers installed), and the check handler gets real-shaped SQS events. The
 * state machine is Step Functions' StartExecution, seen through a spy on the SDK client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { ExecutionAlreadyExists, SFNClient } from '@aws-sdk/client-sfn';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { handler as checkStream } from '../../../functions/jobs/check-stream.js';
import { MIN_LOOP_SECONDS } from '../../../functions/jobs/expire-stream.js';
import { CHECK_MARGIN_SECONDS, streamCheckMessage } from '../../../functions/platform/stream-timer.js';
import { eventsSince, readEvents } from '../../support/events.js';
import { startApi } from '../../support/api.js';
import { sqsRecord } from '../../../local/invocations.js';
import type { TestApi } from '../../support/api.js';
import { sleep } from '../../support/shapes.js';

const TIMEOUT_SECONDS = 1;
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  server: { streamTimeoutSeconds: TIMEOUT_SECONDS },
};
const STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:stream-timeouts';

let api: TestApi;
let sqs: SQSClient;
let queueUrl: string;
beforeAll(async () => {
  // dispatch: the local SQS emulator; no local stream timers, so the AWS starters run.
  api = await startApi({ config, dispatch: true });
  sqs = new SQSClient({
    endpoint: process.env.SQS_ENDPOINT!,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'stream-checks' }))).QueueUrl!;
  api.setEnv({ STREAM_CHECK_QUEUE_URL: queueUrl, STREAM_TIMEOUT_STATE_MACHINE_ARN: STATE_MACHINE_ARN });
});
afterAll(async () => {
  sqs?.destroy();
  await api?.close();
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

/** An SQS record as Lambda's poller hands it over (from a received message, or with `body`). */
const recordOf = (message: Pick<Message, 'Body'> & Partial<Message>): SQSRecord => sqsRecord(message, 'stream-checks');
const eventOf = (...recs: SQSRecord[]): SQSEvent => ({ Records: recs });
const checkOf = (messageId: string) => recordOf({ Body: streamCheckMessage({ messageId, waitSeconds: 1 }).body });

async function receive(waitSeconds: number): Promise<Message[]> {
  const out = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }),
  );
  return out.Messages ?? [];
}

const endsOf = async (before: number, messageId: string) =>
  (await eventsSince(api.tableName, before)).filter(
    (e) => e.type === 'message.streaming.complete' && e.payload.messageId === messageId,
  );

describe('stream checks (AWS path)', () => {
  it('caps the delay at SQS maximum of 900 s, and comes a second after the timeout', () => {
    expect(streamCheckMessage({ messageId: 'm', waitSeconds: 60 })).toEqual({
      body: JSON.stringify({ messageId: 'm' }),
      delaySeconds: 60 + CHECK_MARGIN_SECONDS,
    });
    expect(streamCheckMessage({ messageId: 'm', waitSeconds: 3600 }).delaySeconds).toBe(900);
  });

  it('a new stream sends one check, invisible until the timeout + 1 s; other messages send none', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const plain = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'agent',
      senderId: 'assistant',
      content: 'not streamed',
    });
    expect(plain.status).toBe(201);
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    const sentAt = Date.now();
    expect(await receive(0)).toEqual([]);
    const received: Message[] = [];
    while (received.length === 0 && Date.now() - sentAt < 8000) received.push(...(await receive(1)));
    const delay = Date.now() - sentAt;
    expect(received.map((m) => JSON.parse(m.Body!))).toEqual([{ messageId: msg.id }]);
    expect(delay).toBeGreaterThanOrEqual((TIMEOUT_SECONDS + CHECK_MARGIN_SECONDS) * 1000 - 250);
    // The abandoned stream is overdue by then: the check cancels it, without an execution.
    const out = await checkStream(eventOf(recordOf(received[0]!)));
    expect(out).toEqual({ batchItemFailures: [] });
    expect((await endsOf(before, msg.id)).map((e) => e.payload.streamState)).toEqual(['cancelled']);
    expect(sfn).not.toHaveBeenCalled();
    // Nothing else was queued (the plain message sent no check).
    expect(await receive(1)).toEqual([]);
  });

  it('a duplicated or redelivered check is harmless: one cancel event', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await startStream(chat.id);
    await sleep(TIMEOUT_SECONDS * 1000 + 200);
    const results = await Promise.all([
      checkStream(eventOf(checkOf(msg.id), checkOf(msg.id))),
      checkStream(eventOf(checkOf(msg.id))),
    ]);
    expect(await checkStream(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
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
    await sleep(TIMEOUT_SECONDS * 1000 + 200);
    expect(await checkStream(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
    expect(await eventsSince(api.tableName, before)).toEqual([]);
    expect(sfn).not.toHaveBeenCalled();
  });

  it('hands a stream still active to the state machine: one execution named by the message id', async () => {
    const sfn = spyOnStepFunctions();
    const chat = await newChat();
    const msg = await startStream(chat.id);
    const before = (await readEvents(api.tableName)).length;
    const chunk = await api.post(`/api/v1/messages/${msg.id}/chunks`, { deltaText: 'still going' });
    expect(chunk.status).toBe(200);
    expect(await checkStream(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
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
    expect(input.waitMs).toBeLessThanOrEqual(TIMEOUT_SECONDS * 1000 + 1);
    // Nothing was cancelled.
    expect(await endsOf(before, msg.id)).toEqual([]);
  });

  it('takes an execution that exists already (a redelivered check) as started', async () => {
    spyOnStepFunctions(async () => {
      throw new ExecutionAlreadyExists({ message: 'Execution Already Exists', $metadata: {} });
    });
    const chat = await newChat();
    const msg = await startStream(chat.id);
    expect(await checkStream(eventOf(checkOf(msg.id)))).toEqual({ batchItemFailures: [] });
  });

  it('reports only the records whose check failed, so only they come back', async () => {
    spyOnStepFunctions(async () => {
      throw new Error('Rate exceeded');
    });
    const chat = await newChat();
    const active = await startStream(chat.id);
    const done = await startStream(chat.id);
    await api.post(`/api/v1/messages/${done.id}/complete`, { finalText: 'x' });
    const failing = checkOf(active.id);
    const out = await checkStream(eventOf(checkOf(done.id), failing));
    expect(out).toEqual({ batchItemFailures: [{ itemIdentifier: failing.messageId }] });
  });

  it('drops a record that names no message instead of retrying it, and ignores an unknown message', async () => {
    const sfn = spyOnStepFunctions();
    const out = await checkStream(
      eventOf(
        recordOf({ Body: 'not json' }),
        recordOf({ Body: '{}' }),
        recordOf({ Body: JSON.stringify({ messageId: 42 }) }),
        recordOf({ Body: JSON.stringify({ messageId: 'AAAAAAAAAAAAAAAAAAAAA' }) }),
      ),
    );
    expect(out).toEqual({ batchItemFailures: [] });
    expect(sfn).not.toHaveBeenCalled();
  });
});
