/**
 * The webhook consumer in AWS (contract §6.6): a consumer of the table's stream whose event
 * source mapping lets through only new persisted event items (lib/constructs/webhooks.ts); the
 * hooks themselves are configuration (they change at runtime), so the filter cannot name their
 * types. Records are handled by Powertools' batch processor: an event whose bookkeeping fails is
 * reported alone and retried; the per-hook claims keep a retried event from being sent twice.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { getConfig } from '../core/live-config.js';
import * as Webhooks from '../core/webhooks.js';
import { eventFromStreamImage } from '../store/events-repo.js';

const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function deliver(record: DynamoDBRecord): Promise<void> {
  const event = eventFromStreamImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined);
  if (event) await Webhooks.deliverEvent(event, await getConfig());
}

export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  processPartialResponse(event, deliver, processor, { context });
