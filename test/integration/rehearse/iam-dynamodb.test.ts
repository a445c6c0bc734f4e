/**
 * The rehearsal's IAM gateway in front of DynamoDB Local (local/rehearse/iam/gateway.ts): real
 * SDK clients, each signing with its principal's keys, get what AWS would give their role's
 * policy (the synthesized read-only role, and policies written here): allowed calls reach the
 * table, denied ones fail with AccessDeniedException and change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import { startIamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { IamGateway } from '../../../local/rehearse/iam/gateway.js';
import type { RehearsalPrincipal } from '../../../local/rehearse/iam/types.js';
import { ensureTable } from '../../../local/table.js';
import {
  ACCOUNT,
  REGION,
  allow,
  deny,
  policy,
  principal,
  synthesizedPolicy,
  tableArn,
} from '../../support/rehearse-iam.js';

const endpoint = process.env.TEST_DYNAMODB_ENDPOINT!;
const table = `rehearse-iam-${randomUUID().slice(0, 8)}`;
const T = tableArn(table);

const reader = principal('FilesGet', synthesizedPolicy('filesGet', { table }));
const writer = principal(
  'Writer',
  policy(
    allow(
      ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem', 'dynamodb:Query'],
      [T],
    ),
    deny(['dynamodb:*'], [T], { 'ForAnyValue:StringEquals': { 'dynamodb:LeadingKeys': ['LOCKED'] } }),
  ),
);
const tenant = principal(
  'Tenant',
  policy(
    allow(['dynamodb:GetItem', 'dynamodb:PutItem'], [T], {
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['TENANT#a'] },
    }),
  ),
);

let gateway: IamGateway;
const clients: DynamoDBClient[] = [];

function clientOf(p: Pick<RehearsalPrincipal, 'accessKeyId' | 'secretAccessKey'>): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    endpoint: gateway.endpoints.dynamodb,
    region: REGION,
    credentials: { accessKeyId: p.accessKeyId, secretAccessKey: p.secretAccessKey },
    maxAttempts: 1,
  });
  clients.push(client);
  return DynamoDBDocumentClient.from(client);
}

/** The table as it is, read past the gateway. */
const direct = () => {
  const client = new DynamoDBClient({
    endpoint,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  clients.push(client);
  return DynamoDBDocumentClient.from(client);
};

async function denied(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (!error) throw new Error('expected the call to be denied, and it passed');
  return error;
}

beforeAll(async () => {
  await ensureTable(endpoint, table);
  gateway = await startIamGateway({
    account: ACCOUNT,
    region: REGION,
    principals: [reader, writer, tenant],
    upstream: { dynamodb: endpoint, sqs: 'http://127.0.0.1:9' },
  });
  await direct().send(
    new PutCommand({ TableName: table, Item: { pk: 'CHAT#1', sk: 'META', gsi1pk: 'AGENT#x', gsi1sk: '1', v: 1 } }),
  );
});

afterAll(async () => {
  for (const client of clients) client.destroy();
  await gateway?.stop();
});

describe('DynamoDB through the IAM gateway', () => {
  it('passes the calls the policy allows, on the table and its indexes', async () => {
    const db = clientOf(reader);
    expect((await db.send(new GetCommand({ TableName: table, Key: { pk: 'CHAT#1', sk: 'META' } }))).Item?.v).toBe(1);
    const byIndex = await db.send(
      new QueryCommand({
        TableName: table,
        IndexName: 'gsi1',
        KeyConditionExpression: '#p = :p',
        ExpressionAttributeNames: { '#p': 'gsi1pk' },
        ExpressionAttributeValues: { ':p': 'AGENT#x' },
      }),
    );
    expect(byIndex.Items?.map((i) => i.pk)).toEqual(['CHAT#1']);
    await clientOf(writer).send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pk: 'CHAT#2', sk: 'META', v: 2 } } },
          {
            Update: {
              TableName: table,
              Key: { pk: 'CHAT#1', sk: 'META' },
              UpdateExpression: 'SET v = :v',
              ExpressionAttributeValues: { ':v': 3 },
            },
          },
        ],
      }),
    );
    const after = await direct().send(new GetCommand({ TableName: table, Key: { pk: 'CHAT#1', sk: 'META' } }));
    expect(after.Item?.v).toBe(3);
  });

  it('denies a write by a read-only role with AccessDeniedException, and nothing changes', async () => {
    const error = await denied(
      clientOf(reader).send(new PutCommand({ TableName: table, Item: { pk: 'CHAT#9', sk: 'META' } })),
    );
    expect(error.name).toBe('AccessDeniedException');
    expect(error.message).toBe(
      `User: arn:aws:sts::${ACCOUNT}:assumed-role/FilesGetRole/FilesGet is not authorized to perform: dynamodb:PutItem ` +
        `on resource: ${T} because no identity-based policy allows the dynamodb:PutItem action`,
    );
    expect((error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(400);
    expect(
      (await direct().send(new GetCommand({ TableName: table, Key: { pk: 'CHAT#9', sk: 'META' } }))).Item,
    ).toBeUndefined();
    expect(gateway.denials.at(-1)).toEqual({
      principal: 'FilesGet',
      action: 'dynamodb:PutItem',
      resource: T,
      message: error.message,
    });
  });

  it('honours a LeadingKeys condition: its partition passes, another is denied', async () => {
    const db = clientOf(tenant);
    await db.send(new PutCommand({ TableName: table, Item: { pk: 'TENANT#a', sk: 'X', v: 'mine' } }));
    expect((await db.send(new GetCommand({ TableName: table, Key: { pk: 'TENANT#a', sk: 'X' } }))).Item?.v).toBe(
      'mine',
    );
    const error = await denied(db.send(new PutCommand({ TableName: table, Item: { pk: 'TENANT#b', sk: 'X' } })));
    expect(error.name).toBe('AccessDeniedException');
    expect(
      (await direct().send(new GetCommand({ TableName: table, Key: { pk: 'TENANT#b', sk: 'X' } }))).Item,
    ).toBeUndefined();
  });

  it('denies a whole transaction for one denied item (an explicit Deny beats the Allow)', async () => {
    const error = await denied(
      clientOf(writer).send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: table, Item: { pk: 'CHAT#3', sk: 'META' } } },
            { Put: { TableName: table, Item: { pk: 'LOCKED', sk: 'META' } } },
          ],
        }),
      ),
    );
    expect(error.name).toBe('AccessDeniedException');
    expect(error.message).toMatch(
      /dynamodb:PutItem on resource: .* with an explicit deny in an identity-based policy$/,
    );
    expect(
      (await direct().send(new GetCommand({ TableName: table, Key: { pk: 'CHAT#3', sk: 'META' } }))).Item,
    ).toBeUndefined();
    // The same Deny stops a plain read of that partition.
    const read = await denied(
      clientOf(writer).send(new GetCommand({ TableName: table, Key: { pk: 'LOCKED', sk: 'META' } })),
    );
    expect(read.name).toBe('AccessDeniedException');
  });

  it('refuses a key it does not know, and a signature made with another secret, as AWS does', async () => {
    const unknown = await denied(
      clientOf({ accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' }).send(
        new GetCommand({ TableName: table, Key: { pk: 'CHAT#1', sk: 'META' } }),
      ),
    );
    expect(unknown.name).toBe('UnrecognizedClientException');
    const forged = await denied(
      clientOf({ accessKeyId: writer.accessKeyId, secretAccessKey: reader.secretAccessKey }).send(
        new GetCommand({ TableName: table, Key: { pk: 'CHAT#1', sk: 'META' } }),
      ),
    );
    expect(forged.name).toBe('InvalidSignatureException');
  });

  it('answers authorize() for calls made on a principal’s behalf (a stream poller with its role)', async () => {
    const stream = `${T}/stream/2026-01-01T00:00:00.000`;
    expect((await gateway.authorize('Writer', 'dynamodb:GetRecords', stream)).allowed).toBe(false);
    expect(await gateway.authorize('Writer', 'dynamodb:GetItem', T, { 'dynamodb:LeadingKeys': ['CHAT#1'] })).toEqual({
      allowed: true,
      message: '',
    });
  });
});
