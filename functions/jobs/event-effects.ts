/**
 * The side effects of persisted events in AWS, from one consumer of the table's stream: web push
 * (contract §7.3), outbound webhooks (§6.6) and auto-rename (§10). One consumer for the three
 * because DynamoDB Streams serves at most two readers per shard without throttling, and the
 * search index writer (functions/jobs/search-index.ts) is the other (lib/constructs/event-effects.ts).
 *
 * Each record runs its three effects side by side. Records are handled by Powertools' batch
 * processor: a record whose effects hit a storage failure is reported alone and retried, which
 * is safe because each effect is idempotent (push's sent mark, the webhooks' per-hook claims, the
 * rename's conditional write); provider and push-service failures are handled inside each effect.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import * as AutoRename from '../core/auto-rename.js';
import { getConfig } from '../core/instance-config.js';
import * as Push from '../core/push.js';
import * as Webhooks from '../core/webhooks.js';
import { eventFromStreamImage } from '../store/events-repo.js';

const processor = new BatchProcessor(EventType.DynamoDBStreams);

async function handle(record: DynamoDBRecord): Promise<void> {
  const event = eventFromStreamImage(record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined);
  if (!event) return;
  const config = await getConfig();
  const results = await Promise.allSettled([
    Push.notifyEvent(event, config),
    Webhooks.deliverEvent(event, config),
    AutoRename.renameForEvent(event, config),
  ]);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

export const handler = (event: DynamoDBStreamEvent, context: Context): Promise<DynamoDBBatchResponse> =>
  processPartialResponse(event, handle, processor, { context });
