/**
 * The push notifier in AWS (contract §7.3, §7.5): a consumer of the table's stream whose event
 * source mapping lets through only new event items of the notifying types (the filter lives in
 * lib/constructs/web-push.ts), so every other write costs no invocation. Records are handled
 * by Powertools' batch processor: a record whose storage calls fail is reported alone and
 * retried; core/push.ts's sent mark keeps a retried or redelivered record from sending twice.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import * as Push from '../core/push.js';
import { getConfig } from '../core/live-config.js';
import { eventFromStreamImage } from '../store/events-repo.js';

const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function notify(record: DynamoDBRecord): Promise<void> {
  const event = eventFromStreamImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined);
  if (event) await Push.notifyEvent(event, await getConfig());
}

export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  processPartialResponse(event, notify, processor, { context });
