/**
 * The rehearsal's DynamoDB stream mappings (local/rehearse/stream-mappings.ts) on a real DynamoDB
 * Local table with a stream, and a real fauxqs for the failure destination: filters dropping
 * records, real-shaped records, StartingPosition, a partial batch response retried from the
 * first failed record, and a poison record isolated by bisection and sent to the OnFailure
 * queue once the retries are spent; a role without the stream permissions is refused.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { FauxqsServer } from 'fauxqs';
import { startFauxqsOnLoopback } from '../../../local/fauxqs.js';
import { createQueues } from '../../../local/rehearse/queues.js';
import type { RehearsalQueue } from '../../../local/rehearse/queues.js';
import { startStreamMappings } from '../../../local/rehearse/stream-mappings.js';
import type { StreamMappings } from '../../../local/rehearse/stream-mappings.js';
import type { AssemblyResource } from '../../../local/rehearse/types.js';
import { FakeAuthorizer, FakeInvoker, fakeFunction } from '../../support/rehearse-fakes.js';
import { eventually } from '../../support/wait.js';

const READER = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
const dynamodbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT!;
const ddb = new DynamoDBClient({
  endpoint: dynamodbEndpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});
let server: FauxqsServer;
let sqsEndpoint: string;
let sqs: SQSClient;
let dlq: RehearsalQueue;
let run = 0;
const running: StreamMappings[] = [];

beforeAll(async () => {
  server = await startFauxqsOnLoopback({ port: 0, logger: false });
  sqsEndpoint = `http://127.0.0.1:${server.port}`;
  sqs = new SQSClient({
    endpoint: sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
  const made = await createQueues({
    endpoint: sqsEndpoint,
    stackName: 'Rehearse',
    resources: [{ stack: '', logicalId: 'WriterDeadLetters', type: 'AWS::SQS::Queue', properties: {}, path: 'DLQ' }],
  });
  dlq = made.queues[0]!;
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((m) => m.stop()));
});
afterAll(async () => {
  sqs.destroy();
  ddb.destroy();
  await server.stop();
});

/** A fresh table with a NEW_AND_OLD_IMAGES stream; its stream ARN as the template resolves it. */
async function tableWithStream(): Promise<{ name: string; streamArn: string }> {
  const name = `rehearse-stream-${process.pid}-${++run}`;
  const out = await ddb.send(
    new CreateTableCommand({
      TableName: name,
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  const label = out.TableDescription!.LatestStreamArn!.split('/stream/')[1];
  return { name, streamArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${name}/stream/${label}` };
}

const put = (table: string, pk: string, type: string) =>
  ddb.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk }, type: { S: type } } }));

const mapping = (fn: string, streamArn: string, extra: Record<string, unknown> = {}): AssemblyResource => ({
  stack: '',
  logicalId: `StreamMapping${run}`,
  type: 'AWS::Lambda::EventSourceMapping',
  path: `Test/StreamMapping${run}`,
  properties: {
    EventSourceArn: streamArn,
    FunctionName: fn,
    StartingPosition: 'TRIM_HORIZON',
    BatchSize: 10,
    ...extra,
  },
});

const keysOf = (calls: unknown[]) =>
  calls.map((c) => (c as DynamoDBStreamEvent).Records.map((r) => r.dynamodb!.Keys!.pk!.S));

describe('DynamoDB stream mappings', () => {
  it('delivers the records its filters keep, shaped as Lambda shapes them, from the stream start', async () => {
    const table = await tableWithStream();
    await put(table.name, 'a', 'event');
    await put(table.name, 'b', 'other');
    await put(table.name, 'c', 'event');
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Writer${run}`);
    const fn = invoker.add(spec, async () => undefined);
    const started = await startStreamMappings({
      resources: [
        mapping(spec.name, table.streamArn, {
          FilterCriteria: {
            Filters: [{ Pattern: '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"type":{"S":["event"]}}}}' }],
          },
        }),
      ],
      invoker,
      authorizer: new FakeAuthorizer()
        .grant(spec.roleArn, READER, table.streamArn)
        .grant(spec.roleArn, ['dynamodb:ListStreams'], '*'),
      queues: [dlq],
      dynamodbEndpoint,
      sqsEndpoint,
      pollMs: 50,
    });
    running.push(started);
    expect(started.errors).toEqual([]);
    await eventually(
      () => keysOf(fn.calls).flat(),
      (keys) => keys.length >= 2,
      { what: 'the two event records' },
    );
    await put(table.name, 'd', 'event');
    await eventually(
      () => keysOf(fn.calls).flat(),
      (keys) => keys.length === 3,
      { what: 'a record written later' },
    );
    expect(keysOf(fn.calls).flat()).toEqual(['a', 'c', 'd']);
    const record = (fn.calls[0] as DynamoDBStreamEvent).Records[0]!;
    expect(record).toMatchObject({
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: table.streamArn,
      dynamodb: {
        Keys: { pk: { S: 'a' } },
        NewImage: { pk: { S: 'a' }, type: { S: 'event' } },
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    });
    expect(record.dynamodb!.SequenceNumber).toMatch(/^\d+$/);
  });

  it('starts at LATEST when told, and retries a partial failure from the first failed record', async () => {
    const table = await tableWithStream();
    await put(table.name, 'old', 'event');
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Effects${run}`);
    let failed = false;
    const fn = invoker.add(spec, async (event: DynamoDBStreamEvent) => {
      const second = event.Records[1];
      if (failed || !second) return { batchItemFailures: [] };
      failed = true;
      return { batchItemFailures: [{ itemIdentifier: second.dynamodb!.SequenceNumber }] };
    });
    const started = await startStreamMappings({
      resources: [
        mapping(spec.name, table.streamArn, {
          StartingPosition: 'LATEST',
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          MaximumBatchingWindowInSeconds: 1,
        }),
      ],
      invoker,
      authorizer: new FakeAuthorizer()
        .grant(spec.roleArn, READER, table.streamArn)
        .grant(spec.roleArn, ['dynamodb:ListStreams'], '*'),
      queues: [dlq],
      dynamodbEndpoint,
      sqsEndpoint,
      pollMs: 50,
      retryDelayMs: 50,
    });
    running.push(started);
    // Let the poller take its LATEST position before writing.
    await new Promise((r) => setTimeout(r, 400));
    for (const pk of ['n1', 'n2', 'n3']) await put(table.name, pk, 'event');
    await eventually(
      () => fn.calls.length,
      (n) => n === 2,
      { what: 'a batch and its retry' },
    );
    expect(keysOf(fn.calls)).toEqual([
      ['n1', 'n2', 'n3'],
      ['n2', 'n3'],
    ]);
  });

  it('isolates a poison record by bisection and sends it to the OnFailure queue after its retries', async () => {
    const table = await tableWithStream();
    for (const pk of ['p1', 'p2', 'poison', 'p4']) await put(table.name, pk, 'event');
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Bisect${run}`);
    const fn = invoker.add(spec, async (event: DynamoDBStreamEvent) => {
      if (event.Records.some((r) => r.dynamodb!.Keys!.pk!.S === 'poison')) throw new Error('cannot index');
    });
    const logged: string[] = [];
    const started = await startStreamMappings({
      resources: [
        mapping(spec.name, table.streamArn, {
          BisectBatchOnFunctionError: true,
          MaximumRetryAttempts: 1,
          DestinationConfig: { OnFailure: { Destination: dlq.arn } },
        }),
      ],
      invoker,
      authorizer: new FakeAuthorizer()
        .grant(spec.roleArn, READER, table.streamArn)
        .grant(spec.roleArn, ['dynamodb:ListStreams'], '*')
        .grant(spec.roleArn, ['sqs:SendMessage'], dlq.arn),
      queues: [dlq],
      dynamodbEndpoint,
      sqsEndpoint,
      pollMs: 50,
      retryDelayMs: 20,
      log: (line) => logged.push(line),
    });
    running.push(started);
    const out = await eventually(
      () => sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.url, WaitTimeSeconds: 1 })),
      (o) => (o.Messages ?? []).length > 0,
      { what: 'the failure record' },
    );
    const body = JSON.parse(out.Messages![0]!.Body!);
    expect(body).toMatchObject({
      version: '1.0',
      requestContext: { functionArn: spec.arn, condition: 'RetryAttemptsExhausted', approximateInvokeCount: 2 },
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      DDBStreamBatchInfo: { batchSize: 1, streamArn: table.streamArn, shardId: expect.stringMatching(/^shardId-/) },
    });
    const calls = keysOf(fn.calls);
    const poisonSeq = (fn.calls as DynamoDBStreamEvent[])
      .flatMap((e) => e.Records)
      .find((r) => r.dynamodb!.Keys!.pk!.S === 'poison')!.dynamodb!.SequenceNumber;
    expect(body.DDBStreamBatchInfo.startSequenceNumber).toBe(poisonSeq);
    // All four, halves [p1 p2] [poison p4], then [poison] twice (one retry) and [p4].
    expect(calls).toEqual([
      ['p1', 'p2', 'poison', 'p4'],
      ['p1', 'p2'],
      ['poison', 'p4'],
      ['poison'],
      ['poison'],
      ['p4'],
    ]);
    expect(logged.filter((l) => l.includes('failed on'))).toHaveLength(4);
  });

  it('refuses a mapping whose role may not read the stream', async () => {
    const table = await tableWithStream();
    const invoker = new FakeInvoker();
    const spec = fakeFunction(`Blind${run}`);
    invoker.add(spec, async () => undefined);
    const started = await startStreamMappings({
      resources: [mapping(spec.name, table.streamArn)],
      invoker,
      authorizer: new FakeAuthorizer().grant(
        spec.roleArn,
        ['dynamodb:DescribeStream', 'dynamodb:GetShardIterator'],
        table.streamArn,
      ),
      queues: [dlq],
      dynamodbEndpoint,
      sqsEndpoint,
    });
    running.push(started);
    expect(started.mappings[0]!.running).toBe(false);
    expect(started.errors.map((e) => /may not (\S+)/.exec(e)?.[1])).toEqual([
      'dynamodb:GetRecords',
      'dynamodb:ListStreams',
    ]);
  });
});
