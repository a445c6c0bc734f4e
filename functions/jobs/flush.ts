/**
 * The flush queue's consumer: the one event source of the dispatch flush queue
 * (lib/constructs/dispatch-queues.ts), which carries three kinds of delayed record:
 * - a flush signal `{ chatId }` (contract §4.4.3, functions/platform/queues.ts `sendFlush`):
 *   the chat's unsealed inputs may be ready; `flush` (core/dispatch/seal.ts) seals them, or schedules the
 *   next look;
 * - a stream check `{ messageId }` (contract §4.2, functions/platform/stream-timer.ts): a new
 *   stream's timeout has passed; `checkStream` (functions/jobs/check-stream.ts) looks at it once;
 * - a request timer `{ requestTimer }` (§5.5.6, functions/platform/request-timer.ts): a deadline's
 *   reminder or expiry falls due, or a long wait's 900 s hop ends; core/request-expiry.ts runs it.
 * The stream checks ride on this queue so that the stack has one SQS event source mapping
 * instead of two: an idle mapping long-polls all month (~648,000 requests, $0.26).
 *
 * Records are handled by Powertools' batch processor, each on its own, all at once: a record that
 * fails is reported back (ReportBatchItemFailures), so only it comes back (up to the queue's
 * maxReceiveCount, then the flush dead-letter queue and its alarm); when all fail, all are
 * reported (rather than the invocation failing: the same records come back either way). A record
 * of neither shape is dropped with a warning: retrying it would not give it one.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { flush } from '../core/dispatch/seal.js';
import { getConfig } from '../core/instance-config.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { logger } from '../platform/logger.js';
import { fireRequestTimer } from '../core/request-expiry.js';
import type { RequestTimer } from '../platform/request-timer.js';
import { checkStream } from './check-stream.js';

/** What a flush-queue record asks for, by its body's shape (exactly one of the two ids). */
export type FlushQueueRecord =
  | { kind: 'flush'; chatId: string }
  | { kind: 'stream check'; messageId: string }
  | { kind: 'request timer'; timer: RequestTimer };

/** A request timer's record (functions/platform/request-timer.ts), checked field by field. */
function requestTimerOf(value: unknown): RequestTimer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const t = value as Record<string, unknown>;
  const kindOk = t.kind === 'expire' || (t.kind === 'remind' && Number.isInteger(t.before));
  if (typeof t.requestId !== 'string' || typeof t.at !== 'string' || !Number.isFinite(t.fireAtMs) || !kindOk) {
    return undefined;
  }
  return {
    requestId: t.requestId,
    kind: t.kind as RequestTimer['kind'],
    at: t.at,
    fireAtMs: t.fireAtMs as number,
    ...(t.kind === 'remind' ? { before: t.before as number } : {}),
  };
}

export function flushQueueRecord(body: string): FlushQueueRecord | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { chatId, messageId, requestTimer } = parsed as {
    chatId?: unknown;
    messageId?: unknown;
    requestTimer?: unknown;
  };
  if (requestTimer !== undefined) {
    const timer = requestTimerOf(requestTimer);
    return timer && chatId === undefined && messageId === undefined ? { kind: 'request timer', timer } : undefined;
  }
  if (typeof chatId === 'string' && messageId === undefined) return { kind: 'flush', chatId };
  if (typeof messageId === 'string' && chatId === undefined) return { kind: 'stream check', messageId };
  return undefined;
}

/** One record; throws when it should come back. */
async function handle(config: InstanceConfig, record: SQSRecord): Promise<void> {
  const what = flushQueueRecord(record.body);
  if (!what) {
    logger.warn('flush queue: record that is not a flush signal, a stream check or a request timer dropped', {
      sqsMessageId: record.messageId,
    });
    return;
  }
  try {
    if (what.kind === 'flush') {
      await flush(config, what.chatId);
      return;
    }
    if (what.kind === 'request timer') {
      const outcome = await fireRequestTimer(config, what.timer);
      logger.info('request timer', { ...what.timer, outcome, sqsMessageId: record.messageId });
      return;
    }
    const outcome = await checkStream(config, what.messageId);
    logger.info('stream check', { messageId: what.messageId, outcome, sqsMessageId: record.messageId });
  } catch (error) {
    const id =
      what.kind === 'flush'
        ? { chatId: what.chatId }
        : what.kind === 'stream check'
          ? { messageId: what.messageId }
          : { requestId: what.timer.requestId };
    logger.error(`${what.kind} failed`, { ...id, sqsMessageId: record.messageId, error });
    throw error;
  }
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const config = await getConfig();
  // A processor per invocation: it keeps the invocation's records and failures, and outside Lambda
  // (the local runtime, tests) invocations of this handler overlap.
  return processPartialResponse(
    event,
    (record: SQSRecord) => handle(config, record),
    new BatchProcessor(EventType.SQS),
    {
      throwOnFullBatchFailure: false,
    },
  );
}
