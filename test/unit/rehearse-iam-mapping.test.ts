/**
 * The rehearsal's request → IAM checks mapping (local/rehearse/iam/): which action, resource and
 * dynamodb:LeadingKeys / s3:prefix each request is authorized with, as IAM authorizes it.
 */
import { describe, expect, it } from '@jest/globals';
import { dynamoChecks, queryPartitionValue, streamArnOf } from '../../local/rehearse/iam/dynamodb.js';
import { s3Checks } from '../../local/rehearse/iam/s3.js';
import { sfnChecks } from '../../local/rehearse/iam/sfn.js';
import { sqsChecks } from '../../local/rehearse/iam/sqs.js';
import type { S3Request } from '../../local/s3-access.js';

const place = { account: '111122223333', region: 'eu-west-1' };
const T = 'arn:aws:dynamodb:eu-west-1:111122223333:table/t';
/** Table t: partition key pk, index gsi1 on gpk; table other: partition key id. */
const keys = async (table: string, index?: string) =>
  table === 't'
    ? index === undefined
      ? 'pk'
      : index === 'gsi1'
        ? 'gpk'
        : undefined
    : table === 'other'
      ? 'id'
      : undefined;
const ddb = (op: string, body: Record<string, unknown>) => dynamoChecks(place, `DynamoDB_20120810.${op}`, body, keys);
const lead = (...values: string[]) => ({ 'dynamodb:LeadingKeys': values });

describe('DynamoDB requests as IAM checks', () => {
  it('authorizes an item operation on the table with its partition key as LeadingKeys', async () => {
    expect(await ddb('GetItem', { TableName: 't', Key: { pk: { S: 'CHAT#1' }, sk: { S: 'META' } } })).toEqual([
      { action: 'dynamodb:GetItem', resource: T, context: lead('CHAT#1') },
    ]);
    expect(await ddb('PutItem', { TableName: 't', Item: { pk: { S: 'A' }, sk: { S: 'B' }, n: { N: '1' } } })).toEqual([
      { action: 'dynamodb:PutItem', resource: T, context: lead('A') },
    ]);
    expect(await ddb('UpdateItem', { TableName: 'other', Key: { id: { N: '42' } } })).toEqual([
      {
        action: 'dynamodb:UpdateItem',
        resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/other',
        context: lead('42'),
      },
    ]);
    expect(await ddb('DeleteItem', { TableName: T, Key: { pk: { S: 'X' } } })).toEqual([
      { action: 'dynamodb:DeleteItem', resource: T, context: lead('X') },
    ]);
  });

  it('takes a Query’s partition key from its key condition, names resolved, on the table or the index', async () => {
    expect(
      await ddb('Query', {
        TableName: 't',
        KeyConditionExpression: '#p = :p AND begins_with(#s, :s)',
        ExpressionAttributeNames: { '#p': 'pk', '#s': 'sk' },
        ExpressionAttributeValues: { ':p': { S: 'CHAT#9' }, ':s': { S: 'MSG#' } },
      }),
    ).toEqual([{ action: 'dynamodb:Query', resource: T, context: lead('CHAT#9') }]);
    expect(
      await ddb('Query', {
        TableName: 't',
        IndexName: 'gsi1',
        KeyConditionExpression: 'gpk = :g and sk BETWEEN :a AND :b',
        ExpressionAttributeValues: { ':g': { S: 'AGENT#x' }, ':a': { S: '1' }, ':b': { S: '2' } },
      }),
    ).toEqual([{ action: 'dynamodb:Query', resource: `${T}/index/gsi1`, context: lead('AGENT#x') }]);
    // The index's partition key, not the table's: an equality on pk in an index query names no partition.
    expect(
      queryPartitionValue({ KeyConditionExpression: ':v = pk', ExpressionAttributeValues: { ':v': { S: 'P' } } }, 'pk'),
    ).toBe('P');
    expect(
      queryPartitionValue(
        { KeyConditions: { pk: { ComparisonOperator: 'EQ', AttributeValueList: [{ S: 'L' }] } } },
        'pk',
      ),
    ).toBe('L');
    expect(
      queryPartitionValue({ KeyConditionExpression: 'sk = :v', ExpressionAttributeValues: { ':v': { S: 'P' } } }, 'pk'),
    ).toBeUndefined();
  });

  it('checks a batch once per table with all of its partition keys', async () => {
    expect(
      await ddb('BatchGetItem', {
        RequestItems: {
          t: {
            Keys: [
              { pk: { S: 'A' }, sk: { S: '1' } },
              { pk: { S: 'B' }, sk: { S: '1' } },
              { pk: { S: 'A' }, sk: { S: '2' } },
            ],
          },
          other: { Keys: [{ id: { S: 'Z' } }] },
        },
      }),
    ).toEqual([
      { action: 'dynamodb:BatchGetItem', resource: T, context: lead('A', 'B') },
      {
        action: 'dynamodb:BatchGetItem',
        resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/other',
        context: lead('Z'),
      },
    ]);
    expect(
      await ddb('BatchWriteItem', {
        RequestItems: {
          t: [{ PutRequest: { Item: { pk: { S: 'P' } } } }, { DeleteRequest: { Key: { pk: { S: 'D' } } } }],
        },
      }),
    ).toEqual([{ action: 'dynamodb:BatchWriteItem', resource: T, context: lead('P', 'D') }]);
  });

  it('checks each item of a transaction as its own operation with its own key', async () => {
    expect(
      await ddb('TransactWriteItems', {
        TransactItems: [
          { Put: { TableName: 't', Item: { pk: { S: 'A' } } } },
          { Update: { TableName: 't', Key: { pk: { S: 'B' } } } },
          { Delete: { TableName: 'other', Key: { id: { S: 'C' } } } },
          { ConditionCheck: { TableName: 't', Key: { pk: { S: 'D' } } } },
        ],
      }),
    ).toEqual([
      { action: 'dynamodb:PutItem', resource: T, context: lead('A') },
      { action: 'dynamodb:UpdateItem', resource: T, context: lead('B') },
      {
        action: 'dynamodb:DeleteItem',
        resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/other',
        context: lead('C'),
      },
      { action: 'dynamodb:ConditionCheckItem', resource: T, context: lead('D') },
    ]);
    expect(
      await ddb('TransactGetItems', { TransactItems: [{ Get: { TableName: 't', Key: { pk: { S: 'G' } } } }] }),
    ).toEqual([{ action: 'dynamodb:GetItem', resource: T, context: lead('G') }]);
  });

  it('gives no LeadingKeys where a request names no partition (Scan, describe, unknown table)', async () => {
    expect(await ddb('Scan', { TableName: 't', IndexName: 'gsi1' })).toEqual([
      { action: 'dynamodb:Scan', resource: `${T}/index/gsi1` },
    ]);
    expect(await ddb('DescribeTable', { TableName: 't' })).toEqual([{ action: 'dynamodb:DescribeTable', resource: T }]);
    expect(await ddb('ListTables', {})).toEqual([{ action: 'dynamodb:ListTables', resource: '*' }]);
    expect(await ddb('GetItem', { TableName: 'nowhere', Key: { pk: { S: 'A' } } })).toEqual([
      { action: 'dynamodb:GetItem', resource: 'arn:aws:dynamodb:eu-west-1:111122223333:table/nowhere', context: {} },
    ]);
    expect(await ddb('ExecuteStatement', { Statement: 'UPDATE "t" SET a = 1 WHERE pk = \'x\'' })).toEqual([
      { action: 'dynamodb:PartiQLUpdate', resource: T },
    ]);
  });

  it('finds the stream of a GetRecords in its shard iterator, in the rehearsal’s region and account', async () => {
    const local = 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-01-01T00:00:00.000';
    expect(streamArnOf(place, `000|${local}|shardId-1|AAAA`)).toBe(`${T}/stream/2026-01-01T00:00:00.000`);
    const streams = (op: string, body: Record<string, unknown>) =>
      dynamoChecks(place, `DynamoDBStreams_20120810.${op}`, body, keys);
    expect(await streams('GetRecords', { ShardIterator: `${local}|1|AAAA` })).toEqual([
      { action: 'dynamodb:GetRecords', resource: `${T}/stream/2026-01-01T00:00:00.000` },
    ]);
    expect(await streams('DescribeStream', { StreamArn: local })).toEqual([
      { action: 'dynamodb:DescribeStream', resource: `${T}/stream/2026-01-01T00:00:00.000` },
    ]);
    expect(await streams('ListStreams', {})).toEqual([{ action: 'dynamodb:ListStreams', resource: '*' }]);
  });
});

describe('SQS and Step Functions requests as IAM checks', () => {
  it('authorizes a batch as its single action, on the ARN of the queue its URL names', () => {
    const url = 'http://127.0.0.1:4566/000000000000/dispatch-batches.fifo';
    const arn = 'arn:aws:sqs:eu-west-1:111122223333:dispatch-batches.fifo';
    expect(sqsChecks(place, 'AmazonSQS.SendMessageBatch', { QueueUrl: url })).toEqual([
      { action: 'sqs:SendMessage', resource: arn },
    ]);
    expect(sqsChecks(place, 'AmazonSQS.DeleteMessageBatch', { QueueUrl: url })).toEqual([
      { action: 'sqs:DeleteMessage', resource: arn },
    ]);
    expect(sqsChecks(place, 'AmazonSQS.ReceiveMessage', { QueueUrl: url })).toEqual([
      { action: 'sqs:ReceiveMessage', resource: arn },
    ]);
    expect(sqsChecks(place, 'AmazonSQS.GetQueueUrl', { QueueName: 'q' })).toEqual([
      { action: 'sqs:GetQueueUrl', resource: 'arn:aws:sqs:eu-west-1:111122223333:q' },
    ]);
    expect(sqsChecks(place, 'AmazonSQS.ListQueues', {})).toEqual([{ action: 'sqs:ListQueues', resource: '*' }]);
  });

  it('authorizes StartExecution on the state machine it names', () => {
    const sm = 'arn:aws:states:eu-west-1:111122223333:stateMachine:timeouts';
    expect(sfnChecks('AWSStepFunctions.StartExecution', { stateMachineArn: sm, input: '{}' })).toEqual([
      { action: 'states:StartExecution', resource: sm },
    ]);
    expect(sfnChecks('AWSStepFunctions.SendTaskSuccess', { taskToken: 't' })).toEqual([
      { action: 'states:SendTaskSuccess', resource: '*' },
    ]);
  });
});

describe('S3 requests as IAM checks', () => {
  const request = (
    method: string,
    bucket: string,
    key: string,
    query: [string, string][] = [],
    extra: Partial<S3Request> = {},
  ): S3Request => ({
    accessKeyId: 'AKIA',
    method,
    bucket,
    key,
    query,
    headers: {},
    authType: 'REST-HEADER',
    ...extra,
  });
  const actions = (r: S3Request) => s3Checks(r).map((c) => `${c.action} ${c.resource}`);

  it('maps object reads, writes and deletes on arn:aws:s3:::<bucket>/<key>', () => {
    expect(actions(request('GET', 'b', 'uploads/a b'))).toEqual(['s3:GetObject arn:aws:s3:::b/uploads/a b']);
    expect(actions(request('HEAD', 'b', 'k'))).toEqual(['s3:GetObject arn:aws:s3:::b/k']);
    expect(actions(request('PUT', 'b', 'k'))).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(
      actions(
        request('PUT', 'b', 'k', [
          ['partNumber', '1'],
          ['uploadId', 'u'],
        ]),
      ),
    ).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(actions(request('POST', 'b', 'k', [['uploads', '']]))).toEqual(['s3:PutObject arn:aws:s3:::b/k']);
    expect(actions(request('DELETE', 'b', 'k'))).toEqual(['s3:DeleteObject arn:aws:s3:::b/k']);
    expect(actions(request('DELETE', 'b', 'k', [['uploadId', 'u']]))).toEqual([
      's3:AbortMultipartUpload arn:aws:s3:::b/k',
    ]);
  });

  it('maps a copy to GetObject on its source and PutObject on its target', () => {
    const copy = request('PUT', 'b', 'uploads/new', [], {
      headers: { 'x-amz-copy-source': '/b/pending/old%20one?versionId=1' },
    });
    expect(actions(copy)).toEqual([
      's3:GetObject arn:aws:s3:::b/pending/old one',
      's3:PutObject arn:aws:s3:::b/uploads/new',
    ]);
  });

  it('maps a listing to ListBucket on the bucket with its prefix, and DeleteObjects to each key', () => {
    const [list] = s3Checks(
      request(
        'GET',
        'b',
        '',
        [
          ['list-type', '2'],
          ['prefix', 'pending/x'],
        ],
        { authType: 'REST-QUERY-STRING' },
      ),
    );
    expect(list).toEqual({
      action: 's3:ListBucket',
      resource: 'arn:aws:s3:::b',
      context: {
        's3:authType': 'REST-QUERY-STRING',
        's3:signatureversion': 'AWS4-HMAC-SHA256',
        's3:prefix': 'pending/x',
      },
    });
    const body = Buffer.from('<Delete><Object><Key>a&amp;b</Key></Object><Object><Key>c</Key></Object></Delete>');
    expect(actions(request('POST', 'b', '', [['delete', '']], { body }))).toEqual([
      's3:DeleteObject arn:aws:s3:::b/a&b',
      's3:DeleteObject arn:aws:s3:::b/c',
    ]);
    expect(actions(request('GET', '', ''))).toEqual(['s3:ListAllMyBuckets *']);
  });
});
