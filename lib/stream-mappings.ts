/**
 * The event source mappings of the table stream's two consumers, as plain data: the stack builds
 * them from here (lib/constructs/search-index.ts and event-effects.ts, through stream-consumer.ts
 * `mappingProps`), and the local runtime applies the same settings when its tails of the event log
 * feed the same handlers (local/stream-tail.ts): the filters, the batch size, partial batch
 * responses, bisection and the retries. Filters are EventBridge patterns, as Lambda's
 * FilterCriteria holds them (the template's `Pattern` is their JSON).
 */
import { EVENTS } from '../functions/model/events.js';
import type { EventDef, PayloadOf } from '../functions/model/events.js';

/** An EventBridge pattern: objects match nested fields, arrays list a leaf's alternatives. */
export interface FilterPattern {
  [field: string]: FilterPattern | readonly unknown[];
}

export interface TableStreamMapping {
  /** The consumer: its module under functions/jobs, which exports `handler`. */
  job: 'event-effects' | 'search-index';
  /** The consumer function's timeout: an invocation's budget (its context's remaining time). */
  timeoutSeconds: number;
  startingPosition: 'TRIM_HORIZON' | 'LATEST';
  batchSize: number;
  maxBatchingWindowSeconds: number;
  /** Concurrent batches per shard (Lambda's default, 1, when absent). */
  parallelizationFactor?: number;
  /** A failed batch is split in two and each half retried (the split costs no retry). */
  bisectBatchOnError: boolean;
  /** Retries of a failed batch before its records are given up (to the dead-letter queue). */
  retryAttempts: number;
  /** The handler answers `batchItemFailures`; the batch is retried from the first one named. */
  reportBatchItemFailures: boolean;
  /** A record reaches the handler when any of these matches it (at most 5). */
  filters: readonly FilterPattern[];
}

/** New event items of `event`'s type whose payload matches `payload` (rules on its fields, by name). */
const newEvent = <D extends EventDef>(
  event: D,
  payload: { [K in keyof PayloadOf<D>]?: FilterPattern },
): FilterPattern => ({
  eventName: ['INSERT'],
  dynamodb: {
    NewImage: {
      type: { S: ['event'] },
      eventType: { S: [event.type] },
      payload: { M: payload as FilterPattern },
    },
  },
});

export const tableStreamMappings = {
  /**
   * The search index writer (functions/jobs/search-index.ts; lib/constructs/search-index.ts says
   * why): only new message events that can carry searchable text, from the oldest record the
   * stream keeps, batches of up to 100 gathered for a second, one batch at a time.
   */
  searchIndex: {
    job: 'search-index',
    // A merge of the largest size class (25,000 messages) takes seconds; 5 minutes is ample.
    timeoutSeconds: 300,
    startingPosition: 'TRIM_HORIZON',
    batchSize: 100,
    maxBatchingWindowSeconds: 1,
    parallelizationFactor: 1,
    bisectBatchOnError: true,
    retryAttempts: 5,
    reportBatchItemFailures: false,
    filters: [
      newEvent(EVENTS.messageCreated, { contentFinal: { S: [{ exists: true }] } }),
      newEvent(EVENTS.messageStreamingComplete, { streamState: { S: ['complete'] } }),
    ],
  },
  /**
   * Push, webhooks and auto-rename (functions/jobs/event-effects.ts; lib/constructs/event-effects.ts
   * says why): every new persisted event, batches of up to 10 with no window, a record that failed
   * retried alone.
   */
  eventEffects: {
    job: 'event-effects',
    // A hook may take 1 + maxRetries attempts of timeoutMs with back-off.
    timeoutSeconds: 300,
    startingPosition: 'LATEST',
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    bisectBatchOnError: true,
    retryAttempts: 3,
    reportBatchItemFailures: true,
    filters: [
      {
        eventName: ['INSERT'],
        dynamodb: { NewImage: { type: { S: ['event'] }, eventType: { S: [{ exists: true }] } } },
      },
    ],
  },
} as const satisfies Record<string, TableStreamMapping>;
