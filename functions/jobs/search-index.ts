/**
 * The search index writer in AWS (contract §9, docs/search.md): a consumer of the table's stream
 * whose event source mapping lets through only new message events that can carry searchable
 * text (lib/constructs/search-index.ts), with reserved concurrency 1 so the index has one
 * writer. A batch becomes one new segment (core/search.ts indexEvents); if it fails, the whole
 * batch is retried (bisected), which is safe: a message indexed twice is one hit.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import * as Search from '../core/search.js';
import { logger } from '../platform/logger.js';
import { eventFromStreamImage } from '../store/events-repo.js';
import type { StoredEvent } from '../store/events-repo.js';

export const handler = async (event: DynamoDBStreamEvent): Promise<void> => {
  const events = event.Records.map((r) =>
    eventFromStreamImage(r.dynamodb?.NewImage as Record<string, AttributeValue> | undefined),
  ).filter((e): e is StoredEvent => e !== undefined);
  const indexed = await Search.indexEvents(events);
  logger.info('search index batch', { records: event.Records.length, indexed });
};
