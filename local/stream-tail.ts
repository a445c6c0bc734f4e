/**
 * A consumer of the table's stream, run locally: a tail of the event log (local/event-tail.ts)
 * feeds the consumer's own handler (functions/jobs/<job>.ts, the module Lambda runs) with the
 * records the deployed stream would give it, under its mapping's settings (lib/stream-mappings.ts,
 * which the stack builds the mapping from):
 * - each event's record is made of its item as stored (streamRecord below);
 * - the mapping's filters drop the records Lambda would drop (rehearse/event-filter.ts, the
 *   rehearsal's reading of FilterCriteria), before batching, as Lambda filters;
 * - the rest go in batches of at most its BatchSize, one batch at a time (one shard), with Lambda's
 *   error handling (rehearse/stream-delivery.ts: a partial batch response retried from the first
 *   failed record, bisection, the retries; records given up on get an error line here, where AWS
 *   would send them to the dead-letter queue).
 *
 * Where it starts: after its checkpoint when it keeps one (the search index's, in the table), else
 * where the mapping starts: a LATEST one at the log's head (events written while the runtime was
 * down trigger nothing; in AWS the stream keeps them 24 hours), a TRIM_HORIZON one at the oldest
 * event kept. The checkpoint moves once a poll's batches are all done.
 *
 * Not applied: the batching window (a poll's records go at once: the tail polls every 200 ms while
 * events flow, so a window would only delay them), the function's timeout (its context counts it
 * down, nothing stops the handler), and the stream's 24 hours (the log keeps 30 days).
 */
import { createHash } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { env } from '../functions/platform/env.js';
import { currentSequence } from '../functions/store/events-repo.js';
import type { LoggedEvent } from '../functions/store/events-repo.js';
import type { TableStreamMapping } from '../lib/stream-mappings.js';
import { tableSchema } from '../lib/table-schema.js';
import { startLogTail } from './event-tail.js';
import type { TailTiming } from './event-tail.js';
import { asInvocation } from './invocations.js';
import { contextFor } from './lambda-event.js';
import { compileFilters } from './rehearse/event-filter.js';
import { deliverBatch } from './rehearse/stream-delivery.js';

/** A stream consumer's exported handler (functions/jobs/*.ts). */
export type StreamHandler = (event: DynamoDBStreamEvent, context: Context) => Promise<unknown>;

/** Before a failed batch is tried again (the rehearsal's pace). */
const RETRY_DELAY_MS = 1_000;
/**
 * The label of the table's stream in the records' eventSourceARN: a stream's creation time in AWS;
 * the local table has no stream (local/table.ts says why), so a fixed one.
 */
const STREAM_LABEL = '2000-01-01T00:00:00.000';
/** Keeps the records' SequenceNumber a plain decimal without leading zeros, ordered as the events. */
const SEQUENCE_BASE = 10n ** 20n;

export interface StreamTailOptions {
  mapping: TableStreamMapping;
  handler: StreamHandler;
  /** While false, nothing is read (the tail keeps its start in view and resumes from there). */
  enabled?: () => Promise<boolean>;
  /** Where the consumer got to, kept across restarts: the last sequence number done. */
  checkpoint?: { load(): Promise<number>; save(through: number): Promise<void> };
  /** Tests only: other timings. */
  timing?: Partial<TailTiming & { retryDelayMs: number }>;
}

/** The record the table's stream carries for a new event item: INSERT, its image as stored. */
export function streamRecord(event: LoggedEvent): DynamoDBRecord {
  const { AWS_REGION, TABLE_NAME } = env();
  const image = event.image;
  const keys = {
    [tableSchema.partitionKey]: image[tableSchema.partitionKey]!,
    [tableSchema.sortKey]: image[tableSchema.sortKey]!,
  };
  const sequenceNumber = String(SEQUENCE_BASE + BigInt(event.seq));
  const dynamodb = {
    ApproximateCreationDateTime: Math.floor(Date.parse(event.timestamp) / 1000),
    Keys: keys,
    NewImage: image,
    SequenceNumber: sequenceNumber,
    SizeBytes: Buffer.byteLength(JSON.stringify({ Keys: keys, NewImage: image })),
    StreamViewType: tableSchema.streamViewType,
  } satisfies Record<string, unknown> & { Keys: Record<string, AttributeValue> };
  return {
    eventID: createHash('sha256').update(`${TABLE_NAME}/${sequenceNumber}`).digest('hex').slice(0, 32),
    eventName: 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: AWS_REGION,
    // aws-lambda's AttributeValue is its own declaration of the same DynamoDB JSON.
    dynamodb: dynamodb as DynamoDBRecord['dynamodb'],
    eventSourceARN: `arn:aws:dynamodb:${AWS_REGION}:000000000000:table/${TABLE_NAME}/stream/${STREAM_LABEL}`,
  };
}

export function startStreamTail(options: StreamTailOptions): { stop(): Promise<void> } {
  const { mapping, handler, checkpoint } = options;
  const name = mapping.job;
  // The template's FilterCriteria, read as the rehearsal reads it.
  const matches = compileFilters({ Filters: mapping.filters.map((p) => ({ Pattern: JSON.stringify(p) })) });
  const stopping = new AbortController();
  const delivery = {
    partial: mapping.reportBatchItemFailures,
    bisect: mapping.bisectBatchOnError,
    maxRetries: mapping.retryAttempts,
    maxAgeMs: Infinity,
    retryDelayMs: options.timing?.retryDelayMs ?? RETRY_DELAY_MS,
    signal: stopping.signal,
    invoke: (event: DynamoDBStreamEvent, requestId: string) =>
      asInvocation(() => handler(event, contextFor(name, requestId, mapping.timeoutSeconds * 1000)), requestId),
    failed: (batch: DynamoDBRecord[], error: unknown) => {
      if (!stopping.signal.aborted) console.error(`local ${name}: failed on ${batch.length} record(s):`, error);
    },
    giveUp: async (batch: DynamoDBRecord[], context: { condition: string }) => {
      const seqs = batch.map((r) => String(BigInt(r.dynamodb!.SequenceNumber!) - SEQUENCE_BASE));
      console.error(
        `local ${name}: gave up on ${batch.length} record(s) (events ${seqs.join(', ')}): ${context.condition}; ` +
          'in AWS they would go to its dead-letter queue',
      );
    },
  };
  const tail = startLogTail({
    name,
    // After the checkpoint; else as the mapping starts: LATEST at the head, TRIM_HORIZON at the oldest event kept.
    start: async () =>
      checkpoint
        ? (await checkpoint.load()) + 1
        : mapping.startingPosition === 'LATEST'
          ? (await currentSequence()) + 1
          : 1,
    enabled: options.enabled,
    timing: options.timing,
    consume: async (events, through) => {
      const records = events.map(streamRecord).filter(matches);
      for (let i = 0; i < records.length; i += mapping.batchSize) {
        await deliverBatch(records.slice(i, i + mapping.batchSize), delivery);
        // Stopped with a batch undone: read again from where this poll began.
        if (stopping.signal.aborted) throw new Error('stopped');
      }
      await checkpoint?.save(through);
    },
  });
  return {
    stop: async () => {
      // The tail's own stop first (synchronously, so the abort's error is not reported), then the batch's.
      const stopped = tail.stop();
      stopping.abort();
      await stopped;
    },
  };
}
