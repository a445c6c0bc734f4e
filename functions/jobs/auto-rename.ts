/**
 * Auto-rename in AWS (contract §10): a consumer of the table's stream whose event source mapping
 * lets through only new events of finalized agent messages (lib/constructs/auto-rename.ts), so
 * no other write costs an invocation. Records are handled by Powertools' batch processor: a
 * record whose storage calls fail is reported alone and retried (a chat renamed already is left
 * alone); provider failures are logged and dropped by core/auto-rename.ts.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import * as AutoRename from '../core/auto-rename.js';
import { getConfig } from '../core/live-config.js';
import { eventFromStreamImage } from '../store/events-repo.js';

const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function rename(record: DynamoDBRecord): Promise<void> {
  const event = eventFromStreamImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined);
  if (event) await AutoRename.renameForEvent(event, await getConfig());
}

export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  processPartialResponse(event, rename, processor, { context });
