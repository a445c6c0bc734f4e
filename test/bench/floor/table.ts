/**
 * The smallest handler ARCHITECTURE.md allows for a route that reads the table: middy, the
 * Powertools logger (structured JSON logs), a zod schema for its input (zod's mini build, as the
 * functions use) and the DynamoDB document client, bundled as the functions are (the AWS SDK
 * inside). `BENCH_ONLY=bundles` measures it beside the real bundles: no route's bundle can be
 * smaller. table-queue.ts and table-media.ts add the SQS and S3 clients.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import middy from '@middy/core';
import * as z from 'zod/mini';

export const logger = new Logger({ serviceName: 'floor' });
export const table = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const path = z.object({ id: z.string().check(z.minLength(1)) });

export interface FloorEvent {
  pathParameters?: Record<string, string>;
}

export const read = async (event: FloorEvent) => {
  const { id } = path.parse(event.pathParameters ?? {});
  const out = await table.send(new GetCommand({ TableName: 'floor', Key: { pk: id, sk: id } }));
  logger.info('read', { found: out.Item !== undefined });
  return { statusCode: out.Item ? 200 : 404, body: JSON.stringify(out.Item ?? {}) };
};

export const handler = middy<FloorEvent>().handler(read);
