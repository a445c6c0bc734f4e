/**
 * The dispatch queues (contract §4.4, ARCHITECTURE.md "Dispatch"): a FIFO queue of sealed
 * batches, grouped by chat so each chat has at most one batch in flight, and a standard queue
 * of flush signals whose per-message delay times the batch sealing. The table holds the truth
 * (batches, leases, inputs); the queues only deliver and time. The flush queue also carries
 * the delayed stream checks (platform/stream-timer.ts); its consumer, functions/jobs/flush.ts,
 * tells the two apart by their bodies (`{ chatId }` here, `{ messageId }` there).
 *
 * Configuration (platform/env.ts): DISPATCH_QUEUE_URL, FLUSH_QUEUE_URL, and SQS_ENDPOINT
 * (the local emulator, which the local runtime starts before it mounts the handlers).
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import { SQS_BUDGET, clientBudget, longPollTimeoutMs } from './aws-clients.js';
import { env, requiredEnv } from './env.js';
import { callStarted } from './usage.js';

let client: SQSClient | undefined;

/** The functions' one SQS client (exported for tests, which inject faults through its middleware stack). */
export function sqs(): SQSClient {
  if (client) return client;
  // Timeouts and attempts that end inside every route's timeout (aws-clients.ts).
  client = new SQSClient({ endpoint: env().SQS_ENDPOINT, ...clientBudget(SQS_BUDGET) });
  // Queue calls are storage round trips too: counted in the request's storage time (platform/usage.ts).
  client.middlewareStack.add(
    (next) => async (args) => {
      const finished = callStarted();
      try {
        return await next(args);
      } finally {
        finished();
      }
    },
    { step: 'initialize', name: 'storageTime' },
  );
  return client;
}

const queueUrl = (name: 'DISPATCH_QUEUE_URL' | 'FLUSH_QUEUE_URL'): string => requiredEnv(name);

/** SQS's own limits: per-message delay 0–900 s, visibility 0–12 h. */
export const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 12 * 3600;

/**
 * A flush signal for a chat, delivered after about `delayMs` (whole seconds: the consumer
 * waits out the sub-second remainder itself).
 */
export async function sendFlush(chatId: string, delayMs: number): Promise<void> {
  await sendToFlushQueue(JSON.stringify({ chatId }), Math.floor(delayMs / 1000));
}

/**
 * A delayed record on the flush queue, which carries the flush signals and the stream checks
 * (functions/platform/stream-timer.ts; functions/jobs/flush.ts tells them apart). The delay is
 * clamped to SQS's 0–900 s.
 */
export async function sendToFlushQueue(body: string, delaySeconds: number): Promise<void> {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: queueUrl('FLUSH_QUEUE_URL'),
      MessageBody: body,
      DelaySeconds: Math.min(MAX_DELAY_SECONDS, Math.max(0, delaySeconds)),
    }),
  );
}

/**
 * How long the queues keep a message: SQS's maximum, 14 days (the stack and the local queues
 * both take it). A batch message that outlives it is gone while its batch is unsettled; a claim
 * then restores it (core/dispatch/lease.ts restoreOrder), but the longer it is kept, the rarer that is.
 */
export const QUEUE_RETENTION_SECONDS = 14 * 24 * 3600;

/** What a batch's queue message names: the batch, and in the sequential modes its predecessor in the chat. */
export interface BatchMessage {
  id: string;
  /** Its FIFO message group: the chat (sequential modes) or the batch (immediate). */
  group: string;
  /** The chat's previous batch (sequential modes), which must be settled before this one is leased. */
  prev?: string | undefined;
}

/**
 * Enqueues a sealed batch on the FIFO queue. `copy` names a further message for the same batch
 * (a repair or a restore, when its first message may be gone): a distinct deduplication id, so
 * FIFO does not drop it. The body carries the predecessor, so a claim reads both side by side.
 */
export async function sendBatch(batch: BatchMessage, copy?: string): Promise<void> {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: queueUrl('DISPATCH_QUEUE_URL'),
      MessageBody: JSON.stringify(batch.prev ? { batchId: batch.id, prev: batch.prev } : { batchId: batch.id }),
      MessageGroupId: batch.group,
      MessageDeduplicationId: copy ? `${batch.id}.${copy}` : batch.id,
    }),
  );
}

export interface ReceivedBatch {
  batchId: string;
  receiptHandle: string;
  /** The chat's previous batch, as the message names it (sequential modes). */
  prev?: string;
}

/** The most messages one ReceiveMessage returns (SQS). */
export const MAX_RECEIVE = 10;

/** One long-poll receive on the batch queue (waitSeconds 0–20), leasing for `visibilitySeconds`. */
export async function receiveBatches(
  max: number,
  waitSeconds: number,
  visibilitySeconds: number,
): Promise<ReceivedBatch[]> {
  const wait = Math.min(20, Math.max(0, waitSeconds));
  const out = await sqs().send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl('DISPATCH_QUEUE_URL'),
      MaxNumberOfMessages: Math.min(MAX_RECEIVE, Math.max(1, max)),
      WaitTimeSeconds: wait,
      VisibilityTimeout: Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, visibilitySeconds)),
    }),
    // The long poll itself is no timeout: the request may take its wait plus the usual budget,
    // and that bounds its retries too (a stuck receive must not outlast the claim's function).
    { requestTimeout: longPollTimeoutMs(wait), abortSignal: AbortSignal.timeout(longPollTimeoutMs(wait)) },
  );
  return (out.Messages ?? []).flatMap((m: Message) => {
    try {
      const body = JSON.parse(m.Body ?? '{}') as { batchId?: unknown; prev?: unknown };
      if (typeof body.batchId !== 'string' || !m.ReceiptHandle) return [];
      const prev = typeof body.prev === 'string' ? { prev: body.prev } : {};
      return [{ batchId: body.batchId, receiptHandle: m.ReceiptHandle, ...prev }];
    } catch {
      return [];
    }
  });
}

/**
 * Hides (or re-shows, with 0) a received batch message for `ms`, rounded down to whole
 * seconds: it reappears up to a second early, and the claim that receives it then waits out
 * the remainder, so a lease or delay is never cut short and never outlasted by a second.
 */
export async function hideBatch(receiptHandle: string, ms: number): Promise<void> {
  const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.floor(ms / 1000)));
  await sqs().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl('DISPATCH_QUEUE_URL'),
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
}

/**
 * True when a visibility change or delete failed because its receipt handle is no longer the
 * message's newest, or the message is not in flight: another receive (or none) holds it now,
 * and whoever receives it next consults the table. AWS names this ReceiptHandleIsInvalid,
 * MessageNotInflight, or InvalidParameterValue ("The receipt handle has expired").
 */
export function isStaleReceipt(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'ReceiptHandleIsInvalid' || name === 'MessageNotInflight') return true;
  return name === 'InvalidParameterValue' && /receipt ?handle/i.test(String((error as Error).message));
}

export async function deleteBatchMessage(receiptHandle: string): Promise<void> {
  await sqs().send(
    new DeleteMessageCommand({ QueueUrl: queueUrl('DISPATCH_QUEUE_URL'), ReceiptHandle: receiptHandle }),
  );
}

export const dispatchConfigured = (): boolean => Boolean(env().DISPATCH_QUEUE_URL && env().FLUSH_QUEUE_URL);
