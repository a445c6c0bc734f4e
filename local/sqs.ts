/**
 * The local SQS: the fauxqs emulator in-process, the two dispatch queues created as the stack
 * creates them, and a poller that feeds the flush queue to the same consumer Lambda runs, with
 * real-shaped SQS events (docs/dispatch-plan.md lists the emulator's quirks). In AWS the flush
 * queue also carries the delayed stream checks; here local/stream-timers.ts hands them to that
 * same consumer on in-process timers instead (it says why), so this queue only sees flush signals.
 *
 * With a data folder (npm start), fauxqs 2.4.1 loses a message on ChangeMessageVisibility(0):
 * it takes the message out of flight, then its SQLite write-through fails (it stores NULL into
 * the NOT NULL receive count), so the message never returns and its FIFO group stays locked.
 * `repairPersistence` replaces that one write with a correct one before the emulator starts;
 * test/integration/dispatch/local-sqs.test.ts pins every call we make, with and without a
 * data folder, so an upgrade that fixes or changes it is noticed.
 */
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { handler as sweepHandler } from '../functions/jobs/dispatch-sweep.js';
import { handler as flushHandler } from '../functions/jobs/flush.js';
import { QUEUE_RETENTION_SECONDS } from '../functions/platform/queues.js';
import { startFauxqsOnLoopback } from './fauxqs.js';
import { FLUSH_QUEUE_NAME, asInvocation, sqsRecord } from './invocations.js';

/** Both queues keep messages as long as the stack's (lib/constructs/dispatch-queues.ts). */
const RETENTION = String(QUEUE_RETENTION_SECONDS);

/** The sweeper's period here; the stack schedules it every minute. */
const SWEEP_EVERY_MS = 60_000;

export interface LocalSqs {
  endpoint: string;
  dispatchQueueUrl: string;
  flushQueueUrl: string;
  stop: () => Promise<void>;
}

interface FauxqsPersistence {
  db: DatabaseSync;
  updateMessageReady(messageId: string): void;
}

let repaired = false;

/**
 * Makes fauxqs's "message is visible again" write keep the receive count (upstream it writes
 * NULL into a NOT NULL column and throws after the in-memory state already changed). Patches
 * the class the emulator itself imports (same module file, so the same module instance).
 */
async function repairPersistence(): Promise<void> {
  if (repaired) return;
  const base = createRequire(import.meta.url)
    .resolve.paths('fauxqs')
    ?.map((dir) => join(dir, 'fauxqs', 'dist', 'persistence.js'))
    .find((file) => existsSync(file));
  if (!base) throw new Error('local SQS: fauxqs/dist/persistence.js not found (was fauxqs upgraded? see local/sqs.ts)');
  const module = (await import(base)) as { PersistenceManager?: { prototype: FauxqsPersistence } };
  const proto = module.PersistenceManager?.prototype;
  if (!proto || typeof proto.updateMessageReady !== 'function') {
    throw new Error(
      'local SQS: fauxqs PersistenceManager.updateMessageReady not found (was fauxqs upgraded? see local/sqs.ts)',
    );
  }
  const statements = new WeakMap<DatabaseSync, StatementSync>();
  proto.updateMessageReady = function (this: FauxqsPersistence, messageId: string) {
    let statement = statements.get(this.db);
    if (!statement) {
      statement = this.db.prepare(
        'UPDATE sqs_messages SET receipt_handle = NULL, visibility_deadline = NULL WHERE message_id = ?',
      );
      statements.set(this.db, statement);
    }
    statement.run(messageId);
  };
  repaired = true;
}

/**
 * `dataDir` keeps queued messages between runs (npm start); without it the queues live in memory.
 * `consumeAfter`: the flush consumer polls only once it resolves (npm start: once the table is
 * there, since the emulator starts while DynamoDB Local is still booting); it never polls if it rejects.
 */
export async function startLocalSqs(dataDir?: string, consumeAfter?: Promise<unknown>): Promise<LocalSqs> {
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    await repairPersistence();
  }
  const server = await startFauxqsOnLoopback({ port: 0, logger: false, ...(dataDir ? { dataDir } : {}) });
  const endpoint = `http://127.0.0.1:${server.port}`;
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const dispatch = await sqs.send(
    new CreateQueueCommand({
      QueueName: 'dispatch-batches.fifo',
      Attributes: { FifoQueue: 'true', VisibilityTimeout: '30', MessageRetentionPeriod: RETENTION },
    }),
  );
  const flush = await sqs.send(
    new CreateQueueCommand({
      QueueName: FLUSH_QUEUE_NAME,
      Attributes: { VisibilityTimeout: '60', MessageRetentionPeriod: RETENTION },
    }),
  );
  const flushQueueUrl = flush.QueueUrl!;

  // The event source mapping's stand-in: long-poll, invoke, delete what succeeded. Like
  // Lambda's SQS poller, it runs several invocations at once (a flush may sleep up to a
  // second for a chat's debounce, and must not hold up the other chats).
  let stopped = false;
  const inFlight = new Set<Promise<void>>();
  const MAX_CONCURRENT_INVOCATIONS = 10;
  const invoke = async (messages: Message[]) => {
    const event: SQSEvent = {
      Records: messages.map((m) => sqsRecord(m, FLUSH_QUEUE_NAME)),
    };
    const result = await asInvocation(() => flushHandler(event));
    const failed = new Set(result.batchItemFailures.map((f) => f.itemIdentifier));
    for (const m of messages) {
      if (!failed.has(m.MessageId!))
        await sqs.send(new DeleteMessageCommand({ QueueUrl: flushQueueUrl, ReceiptHandle: m.ReceiptHandle! }));
    }
  };
  const poll = (async () => {
    if (consumeAfter) await consumeAfter.catch(() => (stopped = true));
    while (!stopped) {
      try {
        if (inFlight.size >= MAX_CONCURRENT_INVOCATIONS) await Promise.race(inFlight);
        const out = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: flushQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
        );
        const messages = out.Messages ?? [];
        if (messages.length === 0 || stopped) continue;
        const running: Promise<void> = invoke(messages)
          .catch((error: unknown) => {
            if (!stopped) console.error('local flush poller:', error);
          })
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      } catch (error) {
        if (!stopped) console.error('local flush poller:', error);
      }
    }
    await Promise.allSettled([...inFlight]);
  })();

  // The scheduled sweeper, as EventBridge runs it in AWS.
  const sweeper = setInterval(() => {
    asInvocation(() => sweepHandler()).catch((error: unknown) => {
      if (!stopped) console.error('local dispatch sweeper:', error);
    });
  }, SWEEP_EVERY_MS);
  sweeper.unref();

  return {
    endpoint,
    dispatchQueueUrl: dispatch.QueueUrl!,
    flushQueueUrl,
    stop: async () => {
      stopped = true;
      clearInterval(sweeper);
      await poll;
      sqs.destroy();
      await server.stop();
    },
  };
}
