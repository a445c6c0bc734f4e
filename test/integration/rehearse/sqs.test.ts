/**
 * The rehearsal's queues and SQS event source mappings (local/rehearse/queues.ts,
 * sqs-mappings.ts) on a real fauxqs: queues created from template-shaped properties (names,
 * ARNs, attributes, the dead-letter queue first and the emulator's own redrive), and the poller:
 * real-shaped events, partial batch failures deleting only what succeeded, a function error
 * deleting nothing, filters dropping messages, reserved concurrency, and a mapping whose role
 * lacks a poller permission refused as Lambda refuses it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { FauxqsServer } from 'fauxqs';
import type { SQSEvent } from 'aws-lambda';
import { startFauxqsOnLoopback } from '../../../local/fauxqs.js';
import { createQueues, queueArn, queueName } from '../../../local/rehearse/queues.js';
import type { RehearsalQueue } from '../../../local/rehearse/queues.js';
import { startSqsMappings } from '../../../local/rehearse/sqs-mappings.js';
import type { SqsMappings } from '../../../local/rehearse/sqs-mappings.js';
import type { AssemblyResource } from '../../../local/rehearse/types.js';
import { FakeAuthorizer, FakeInvoker, fakeFunction } from '../../support/rehearse-fakes.js';
import { eventually } from '../../support/wait.js';

const POLLER = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'];
let server: FauxqsServer;
let endpoint: string;
let sqs: SQSClient;
let run = 0;
const running: SqsMappings[] = [];

beforeAll(async () => {
  server = await startFauxqsOnLoopback({ port: 0, logger: false });
  endpoint = `http://127.0.0.1:${server.port}`;
  sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
});
afterAll(async () => {
  sqs.destroy();
  await server.stop();
});

const resource = (logicalId: string, type: string, properties: Record<string, unknown>): AssemblyResource => ({
  stack: '',
  logicalId,
  type,
  properties,
  path: `Test/${logicalId}`,
});

/** One standard queue (visibility 1 s, so failures come back quickly) for a test of its own. */
async function oneQueue(extra: Record<string, unknown> = {}): Promise<RehearsalQueue> {
  const id = `Work${++run}`;
  const made = await createQueues({
    endpoint,
    stackName: 'Rehearse',
    resources: [resource(id, 'AWS::SQS::Queue', { VisibilityTimeout: 1, ...extra })],
  });
  return made.queues[0]!;
}

const mapping = (fnName: string, queue: RehearsalQueue, extra: Record<string, unknown> = {}) =>
  resource(`Mapping${run}`, 'AWS::Lambda::EventSourceMapping', {
    EventSourceArn: queue.arn,
    FunctionName: fnName,
    BatchSize: 10,
    ...extra,
  });

const send = (queue: RehearsalQueue, body: string) =>
  sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }));

async function visible(queue: RehearsalQueue): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queue.url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(out.Attributes!.ApproximateNumberOfMessages) + Number(out.Attributes!.ApproximateNumberOfMessagesNotVisible)
  );
}

describe('queues from the template', () => {
  it('creates each queue with its properties, the dead-letter queue first, under CloudFormation-like names', async () => {
    // The shapes of the stack's dispatch queues (cdk.out/ChatRelay.template.json), resolved.
    const dlqName = queueName('ChatRelay', {
      stack: 'Dispatch',
      logicalId: 'BatchDeadLettersC74CAD2D',
      properties: { FifoQueue: true },
    });
    const made = await createQueues({
      endpoint,
      stackName: 'ChatRelay',
      resources: [
        resource('Flush', 'AWS::SQS::Queue', {
          QueueName: 'rehearse-flush',
          DelaySeconds: 2,
          VisibilityTimeout: 180,
          MessageRetentionPeriod: 1209600,
          SqsManagedSseEnabled: true,
        }),
        {
          ...resource('Batches0ABE82F6', 'AWS::SQS::Queue', {
            ContentBasedDeduplication: false,
            FifoQueue: true,
            MessageRetentionPeriod: 1209600,
            RedrivePolicy: { deadLetterTargetArn: queueArn(dlqName), maxReceiveCount: 100 },
            VisibilityTimeout: 30,
          }),
          stack: 'Dispatch',
        },
        { ...resource('BatchDeadLettersC74CAD2D', 'AWS::SQS::Queue', { FifoQueue: true }), stack: 'Dispatch' },
      ],
    });
    expect(made.queues.map((q) => q.name)).toEqual([
      'rehearse-flush',
      'ChatRelay-Dispatch-BatchDeadLettersC74CAD2D.fifo',
      'ChatRelay-Dispatch-Batches0ABE82F6.fifo',
    ]);
    const batches = made.byLogicalId('Dispatch', 'Batches0ABE82F6')!;
    expect(batches.arn).toBe('arn:aws:sqs:us-east-1:000000000000:ChatRelay-Dispatch-Batches0ABE82F6.fifo');
    const attributes = async (q: RehearsalQueue) =>
      (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: q.url, AttributeNames: ['All'] }))).Attributes!;
    const b = await attributes(batches);
    expect(b).toMatchObject({
      FifoQueue: 'true',
      ContentBasedDeduplication: 'false',
      VisibilityTimeout: '30',
      QueueArn: batches.arn,
    });
    expect(JSON.parse(b.RedrivePolicy!)).toEqual({ deadLetterTargetArn: queueArn(dlqName), maxReceiveCount: 100 });
    const flush = await attributes(made.queues[0]!);
    expect(flush).toMatchObject({ DelaySeconds: '2', VisibilityTimeout: '180', MessageRetentionPeriod: '1209600' });
  });

  it('refuses a redrive to a queue that is not in the assembly', async () => {
    await expect(
      createQueues({
        endpoint,
        stackName: 'Rehearse',
        resources: [
          resource('Lonely', 'AWS::SQS::Queue', {
            RedrivePolicy: { deadLetterTargetArn: queueArn('nope'), maxReceiveCount: 3 },
          }),
        ],
      }),
    ).rejects.toThrow(/not in the assembly/);
  });

  it('dead-letters a message received more than maxReceiveCount times (the emulator redrives)', async () => {
    const made = await createQueues({
      endpoint,
      stackName: 'Rehearse',
      resources: [
        resource('RedriveSource', 'AWS::SQS::Queue', {
          RedrivePolicy: { deadLetterTargetArn: queueArn('Rehearse-RedriveDlq'), maxReceiveCount: 2 },
        }),
        resource('RedriveDlq', 'AWS::SQS::Queue', {}),
      ],
    });
    const source = made.byLogicalId('', 'RedriveSource')!;
    const dlq = made.byLogicalId('', 'RedriveDlq')!;
    await send(source, 'poison');
    const receive = (q: RehearsalQueue) =>
      sqs.send(
        new ReceiveMessageCommand({ QueueUrl: q.url, VisibilityTimeout: 0, MessageSystemAttributeNames: ['All'] }),
      );
    expect((await receive(source)).Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('1');
    expect((await receive(source)).Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect((await receive(source)).Messages ?? []).toEqual([]);
    expect((await receive(dlq)).Messages?.[0]?.Body).toBe('poison');
  });
});

describe('SQS event source mappings', () => {
  it('invokes with real-shaped records and deletes only what a partial batch response does not name', async () => {
    const queue = await oneQueue();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Flush${run}`);
    const failOnce = new Set(['b', 'd']);
    const fn = invoker.add(spec, async (event: SQSEvent) => {
      const failures = event.Records.filter((r) => failOnce.delete(r.body)).map((r) => ({
        itemIdentifier: r.messageId,
      }));
      return { batchItemFailures: failures };
    });
    for (const body of ['a', 'b', 'c', 'd', 'e']) await send(queue, body);
    const started = await startSqsMappings({
      resources: [mapping(spec.name, queue, { FunctionResponseTypes: ['ReportBatchItemFailures'] })],
      invoker,
      authorizer: new FakeAuthorizer().grant(spec.roleArn, POLLER, queue.arn),
      queues: [queue],
      endpoint,
    });
    running.push(started);
    expect(started.errors).toEqual([]);
    expect(started.mappings[0]).toMatchObject({ running: true, functionKey: spec.key, source: queue.arn });
    const records = () => fn.calls.flatMap((c) => (c as SQSEvent).Records);
    await eventually(records, (rs) => rs.length === 7, { what: 'five deliveries and two redeliveries' });
    await eventually(
      () => visible(queue),
      (n) => n === 0,
      { what: 'an empty queue' },
    );
    const first = records()[0]!;
    expect(first).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: queue.arn, awsRegion: 'us-east-1' });
    expect(first.attributes).toMatchObject({ ApproximateReceiveCount: '1', SentTimestamp: expect.any(String) });
    const again = records().slice(-2);
    expect(again.map((r) => r.body).sort()).toEqual(['b', 'd']);
    expect(again.map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['2', '2']);
  });

  it('deletes nothing when the function fails: the batch comes back after the visibility timeout', async () => {
    const queue = await oneQueue();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Failing${run}`);
    let failures = 1;
    const fn = invoker.add(spec, async () => {
      if (failures-- > 0) throw new Error('boom');
      return undefined;
    });
    await send(queue, 'x');
    const logged: string[] = [];
    running.push(
      await startSqsMappings({
        resources: [mapping(spec.name, queue)],
        invoker,
        authorizer: new FakeAuthorizer().grant(spec.roleArn, POLLER, queue.arn),
        queues: [queue],
        endpoint,
        log: (line) => logged.push(line),
      }),
    );
    await eventually(
      () => fn.calls.length,
      (n) => n === 2,
      { what: 'a redelivery' },
    );
    expect((fn.calls[1] as SQSEvent).Records[0]!.attributes.ApproximateReceiveCount).toBe('2');
    await eventually(
      () => visible(queue),
      (n) => n === 0,
      { what: 'the message deleted after success' },
    );
    expect(logged).toEqual([`rehearsal: ${spec.name} failed on 1 message(s) of ${queue.name}: Unhandled Error: boom`]);
  });

  it('drops (deletes) the messages its filters reject, without invoking for them', async () => {
    const queue = await oneQueue();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Filtered${run}`);
    const fn = invoker.add(spec, async () => undefined);
    await send(queue, JSON.stringify({ kind: 'skip' }));
    await send(queue, 'plain text');
    await send(queue, JSON.stringify({ kind: 'keep' }));
    running.push(
      await startSqsMappings({
        resources: [
          mapping(spec.name, queue, { FilterCriteria: { Filters: [{ Pattern: '{"body":{"kind":["keep"]}}' }] } }),
        ],
        invoker,
        authorizer: new FakeAuthorizer().grant(spec.roleArn, POLLER, queue.arn),
        queues: [queue],
        endpoint,
      }),
    );
    await eventually(
      () => visible(queue),
      (n) => n === 0,
      { what: 'every message gone' },
    );
    const bodies = fn.calls.flatMap((c) => (c as SQSEvent).Records.map((r) => r.body));
    expect(bodies).toEqual([JSON.stringify({ kind: 'keep' })]);
  });

  it('keeps at most the reserved concurrency of batches in flight', async () => {
    const queue = await oneQueue({ VisibilityTimeout: 5 });
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Reserved${run}`, { reservedConcurrency: 1 });
    let now = 0;
    let most = 0;
    const fn = invoker.add(spec, async () => {
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, 150));
      now--;
    });
    for (const body of ['1', '2', '3', '4']) await send(queue, body);
    running.push(
      await startSqsMappings({
        resources: [mapping(spec.name, queue, { BatchSize: 1 })],
        invoker,
        authorizer: new FakeAuthorizer().grant(spec.roleArn, POLLER, queue.arn),
        queues: [queue],
        endpoint,
      }),
    );
    await eventually(
      () => fn.calls.length,
      (n) => n === 4,
      { what: 'four invocations' },
    );
    expect(most).toBe(1);
  });

  it('refuses a mapping whose role lacks a poller permission, and never polls it; honours Enabled: false', async () => {
    const queue = await oneQueue();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`NoDelete${run}`);
    const off = fakeFunction(`Off${run}`);
    const fn = invoker.add(spec, async () => undefined);
    const offFn = invoker.add(off, async () => undefined);
    await send(queue, 'waiting');
    const started = await startSqsMappings({
      resources: [
        mapping(spec.name, queue),
        { ...mapping(off.name, queue, { Enabled: false }), logicalId: 'Disabled' },
      ],
      invoker,
      authorizer: new FakeAuthorizer()
        .grant(spec.roleArn, ['sqs:ReceiveMessage', 'sqs:GetQueueAttributes'], queue.arn)
        .grant(off.roleArn, POLLER, queue.arn),
      queues: [queue],
      endpoint,
      log: () => {},
    });
    running.push(started);
    expect(started.errors).toHaveLength(1);
    expect(started.errors[0]).toMatch(/may not sqs:DeleteMessage on arn:aws:sqs:us-east-1:000000000000:/);
    expect(started.mappings.map((m) => [m.running, m.problems.length])).toEqual([
      [false, 1],
      [false, 0],
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect([...fn.calls, ...offFn.calls]).toEqual([]);
    expect(await visible(queue)).toBe(1);
  });

  it('refuses a queue whose visibility timeout is shorter than the function timeout', async () => {
    const queue = await oneQueue();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Slow${run}`, { timeoutSeconds: 30 });
    invoker.add(spec, async () => undefined);
    const started = await startSqsMappings({
      resources: [mapping(spec.name, queue)],
      invoker,
      authorizer: new FakeAuthorizer().grant(spec.roleArn, POLLER, queue.arn),
      queues: [queue],
      endpoint,
    });
    running.push(started);
    expect(started.errors.join('\n')).toMatch(/visibility timeout \(1 s\) is shorter than .*timeout \(30 s\)/);
  });
});
