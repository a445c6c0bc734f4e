/** Creates the single table from lib/table-schema.ts, as the stack defines it (less its stream, see below). */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import type { AttributeDefinition } from '@aws-sdk/client-dynamodb';
import { tableSchema } from '../lib/table-schema.js';

/** Creates the table unless it exists; true when it was created. */
export async function ensureTable(endpoint: string, tableName: string): Promise<boolean> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    try {
      await client.send(new DescribeTableCommand({ TableName: tableName }));
      return false;
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    const names = new Set<string>([tableSchema.partitionKey, tableSchema.sortKey]);
    for (const index of tableSchema.indexes) names.add(index.partitionKey).add(index.sortKey);
    const attributes: AttributeDefinition[] = [...names].map((AttributeName) => ({
      AttributeName,
      AttributeType: 'S',
    }));
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: attributes,
        KeySchema: [
          { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableSchema.indexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection:
            'include' in index
              ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.include] }
              : { ProjectionType: 'ALL' },
        })),
        // No stream here, unlike the stack's table: nothing reads it locally, and DynamoDB
        // Local's stream makes every write slower as records accumulate (measured: 1,000
        // two-item transactions took 11.7 s on a fresh table and 32 s five tables later with a
        // stream; a flat 3.4-5.6 s without one). It slowed the test suite and long-lived
        // `npm start` instances alike.
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: tableSchema.ttlAttribute, Enabled: true },
      }),
    );
    return true;
  } finally {
    client.destroy();
  }
}
