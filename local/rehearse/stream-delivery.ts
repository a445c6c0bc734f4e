/**
 * Lambda's error handling for one batch of a stream event source mapping, shared by the
 * rehearsal's stream pollers (stream-mappings.ts) and the local runtime's stream consumers
 * (local/stream-tail.ts), so both retry as a deployed mapping does. The shard waits meanwhile:
 * the next batch goes only once this one is delivered or given up.
 *
 *   deliverBatch(records, { invoke, partial, bisect, maxRetries, maxAgeMs, retryDelayMs, signal,
 *                           giveUp, throttled?, failed? }) -> Promise<void>
 *
 * - ReportBatchItemFailures (`partial`): a partial response retries from the first failed record
 *   (an invalid one fails the whole batch);
 * - a function error retries the batch, or with BisectBatchOnFunctionError (`bisect`) splits it in
 *   two and retries each half (a split does not consume the retry quota);
 * - after MaximumRetryAttempts retries (`maxRetries`; -1: until the record expires) or past
 *   MaximumRecordAgeInSeconds (`maxAgeMs`), the records are given up (`giveUp`: the OnFailure
 *   destination, if any);
 * - a throttled invocation is retried without counting.
 * It returns early, the batch undelivered, once `signal` aborts (the caller reads it again later).
 */
import { randomUUID } from 'node:crypto';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { batchItemFailures, sleep } from './mapping-support.js';

/** How records given up on are described (the OnFailure destination's invocation record). */
export interface GiveUpContext {
  requestId: string;
  invokes: number;
  condition: 'RetryAttemptsExhausted' | 'RecordAgeExceeded';
  functionError?: string | undefined;
}

export interface BatchDelivery {
  /** The mapping reports partial batch responses (ReportBatchItemFailures). */
  partial: boolean;
  bisect: boolean;
  /** Retries before the records are given up; -1: until they are too old. */
  maxRetries: number;
  maxAgeMs: number;
  /** Before a failed batch is tried again. */
  retryDelayMs: number;
  signal: AbortSignal;
  /** One invocation: resolves with the function's response, rejects when it failed. */
  invoke: (event: DynamoDBStreamEvent, requestId: string) => Promise<unknown>;
  /** Records given up on (retries spent or too old). */
  giveUp: (batch: DynamoDBRecord[], context: GiveUpContext) => Promise<void>;
  /** Whether a rejection is a throttle (retried, not counted). */
  throttled?: (error: unknown) => boolean;
  /** A failed invocation, to be told (never the event). */
  failed?: (batch: DynamoDBRecord[], error: unknown) => void;
}

const sequenceNumber = (r: DynamoDBRecord): string => r.dynamodb!.SequenceNumber!;

/** One batch until it succeeds, is split, or is given up (Lambda's stream error handling). */
export async function deliverBatch(
  batch: DynamoDBRecord[],
  rules: BatchDelivery,
  retriesLeft: number = rules.maxRetries,
): Promise<void> {
  let invokes = 0;
  while (!rules.signal.aborted) {
    const requestId = randomUUID();
    let failedFrom = -1;
    let functionError: string | undefined;
    invokes++;
    try {
      const result = await rules.invoke({ Records: batch }, requestId);
      if (!rules.partial) return;
      const failed = batchItemFailures(result, new Set(batch.map(sequenceNumber)));
      if (failed === 'invalid') functionError = 'Unhandled';
      else if (failed.length === 0) return;
      else failedFrom = Math.min(...failed.map((id) => batch.findIndex((r) => sequenceNumber(r) === id)));
    } catch (error) {
      if (rules.throttled?.(error)) {
        invokes--;
        await sleep(rules.retryDelayMs, rules.signal);
        continue;
      }
      functionError = 'Unhandled';
      rules.failed?.(batch, error);
    }
    if (failedFrom >= 0) {
      batch = batch.slice(failedFrom);
    } else if (rules.bisect && batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      await deliverBatch(batch.slice(0, half), rules, retriesLeft);
      await deliverBatch(batch.slice(half), rules, retriesLeft);
      return;
    }
    const oldest = (batch[0]!.dynamodb!.ApproximateCreationDateTime ?? Date.now() / 1000) * 1000;
    const condition =
      retriesLeft === 0 ? 'RetryAttemptsExhausted' : Date.now() - oldest > rules.maxAgeMs ? 'RecordAgeExceeded' : '';
    if (condition) return rules.giveUp(batch, { requestId, invokes, condition, functionError });
    if (retriesLeft > 0) retriesLeft--;
    await sleep(rules.retryDelayMs, rules.signal);
  }
}
