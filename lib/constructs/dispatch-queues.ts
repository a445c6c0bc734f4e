/**
 * The dispatch queues (contract §4.4, docs/dispatch-plan.md, functions/platform/queues.ts):
 * - a FIFO queue of sealed batches (`{batchId}`, group = chat in the sequential modes), which
 *   claims long-poll; a received message's visibility is the batch's lease;
 * - a standard queue of flush signals (`{chatId}`, per-message DelaySeconds = the debounce),
 *   consumed by the flush function (functions/jobs/flush.ts) through an event source mapping.
 *   It has a second role: it also carries the delayed stream checks (`{messageId}`, one per
 *   new stream, functions/platform/stream-timer.ts), which that same consumer runs
 *   (functions/jobs/check-stream.ts); lib/constructs/stream-timeouts.ts gives the consumer the
 *   state machine and the stream-creating routes SendMessage. One queue, one event source
 *   mapping: an idle mapping long-polls all month (~648,000 requests, $0.26).
 * Each has a dead-letter queue with an alarm on its visible messages (notifying the stack's
 * alarm topic when there is one, lib/stack.ts). The table holds the truth; the queues only deliver and time.
 * A sweeper function (functions/jobs/dispatch-sweep.ts), scheduled every minute, resumes work
 * that a crash or a failed queue call left between the table and the queues.
 *
 * Function access: `bindInputWriter` for the `dispatchInputs` routes, `bindWorkerApi` for the
 * `dispatch` routes (lib/routes.ts); nothing else gets the queue URLs or any sqs action.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUE_RETENTION_SECONDS } from '../../functions/platform/queues.js';
import { ApiFunction, jobEntry } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export type DispatchQueuesProps = FunctionWiring;

/**
 * The flush consumer sleeps up to about 1 s per record (records run in parallel) and seals; a
 * stream check on the same queue needs at most CHECK_TIMEOUT (10 s, lib/constructs/stream-timeouts.ts).
 */
export const FLUSH_TIMEOUT = Duration.seconds(30);

/**
 * AWS guidance for SQS event sources: visibility at least six times the function timeout, so
 * a record still being retried by Lambda's poller is not delivered again meanwhile.
 */
const FLUSH_VISIBILITY = Duration.seconds(FLUSH_TIMEOUT.toSeconds() * 6);

/**
 * Claims re-receive a batch on purpose: a batch waiting out its retry delay, or leased by
 * another worker, is received and hidden again (ChangeMessageVisibility) to keep its chat's
 * group blocked, and every such receive counts. A low count would dead-letter healthy
 * batches; the batch item's attempt_count and dispatch.maxAttempts decide real failure.
 */
const BATCH_MAX_RECEIVES = 100;

/**
 * A flush signal or a stream check is idempotent and cheap to redo; five failed runs means
 * something is wrong. The stream checks' CHECK_MAX_RECEIVES (functions/platform/stream-timer.ts),
 * which the local stand-in follows, is the same number: test/infra/stack.test.ts asserts it.
 */
export const FLUSH_MAX_RECEIVES = 5;

/**
 * Every queue keeps its messages the longest SQS allows, 14 days (QUEUE_RETENTION_SECONDS, which
 * the local queues take too): a batch message that expired while its batch was unsettled would
 * let the chat's next batch pass it (a claim restores the order then, core/dispatch/lease.ts), and dead
 * letters are kept for inspection.
 */
const RETENTION = Duration.seconds(QUEUE_RETENTION_SECONDS);

/** The queue calls of functions/platform/queues.ts, by who makes them. */
const SEND = ['sqs:SendMessage'];
/** The dispatch routes: receive (claims), hide (leases, retry delays), delete (ends); they never send batches. */
const CLAIM = ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'];
/** The sweeper's repairs of batch messages: hide until due, or delete once ended. */
const REPAIR = ['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage'];

export class DispatchQueues extends Construct {
  readonly batchQueue: Queue;
  readonly batchDeadLetterQueue: Queue;
  readonly flushQueue: Queue;
  readonly flushDeadLetterQueue: Queue;
  readonly flushFunction: ApiFunction;
  readonly batchDeadLetterAlarm: Alarm;
  readonly flushDeadLetterAlarm: Alarm;
  readonly sweepFunction: ApiFunction;
  readonly sweepSchedule: Rule;

  constructor(scope: Construct, id: string, props: DispatchQueuesProps) {
    super(scope, id);

    // SSE-SQS (no key to grant or pay for) and TLS only (a Deny on aws:SecureTransport false).
    const common = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };

    this.batchDeadLetterQueue = new Queue(this, 'BatchDeadLetters', {
      ...common,
      fifo: true,
      contentBasedDeduplication: false,
      retentionPeriod: RETENTION,
    });
    this.batchQueue = new Queue(this, 'Batches', {
      ...common,
      fifo: true,
      // MessageDeduplicationId is the batch id (sendBatch); two batches never share a body anyway.
      contentBasedDeduplication: false,
      // Claims set their own visibility (the lease) on every receive; this applies to none.
      visibilityTimeout: Duration.seconds(30),
      // Claims choose their long-poll wait per receive.
      receiveMessageWaitTime: Duration.seconds(0),
      retentionPeriod: RETENTION,
      deadLetterQueue: { queue: this.batchDeadLetterQueue, maxReceiveCount: BATCH_MAX_RECEIVES },
    });

    this.flushDeadLetterQueue = new Queue(this, 'FlushDeadLetters', {
      ...common,
      retentionPeriod: RETENTION,
    });
    this.flushQueue = new Queue(this, 'FlushSignals', {
      ...common,
      visibilityTimeout: FLUSH_VISIBILITY,
      // Far past the longest delay of a flush signal or a stream check (900 s) and their retries.
      retentionPeriod: RETENTION,
      deadLetterQueue: { queue: this.flushDeadLetterQueue, maxReceiveCount: FLUSH_MAX_RECEIVES },
    });

    this.flushFunction = this.jobFunction(
      props,
      'Flush',
      'flush',
      'Flush queue consumer: seals batched_sequential dispatch inputs when due (or re-signals), and runs the ' +
        'delayed stream checks',
    );
    // Grants the consumer ReceiveMessage, DeleteMessage, ChangeMessageVisibility and
    // GetQueueAttributes (+ GetQueueUrl) on the flush queue, as the poller needs. The stack's
    // only SQS event source mapping: the stream checks ride on this queue too.
    this.flushFunction.addEventSource(
      new SqsEventSource(this.flushQueue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(0),
        reportBatchItemFailures: true,
      }),
    );

    this.sweepFunction = this.jobFunction(
      props,
      'Sweep',
      'dispatch-sweep',
      'Resumes dispatch work stranded between the table and the queues (every minute)',
    );
    // It also repairs batch messages after a failed visibility change or delete (REPAIR).
    this.batchQueue.grant(this.sweepFunction, ...REPAIR);
    this.sweepSchedule = new Rule(this, 'SweepSchedule', {
      description: 'Runs the dispatch sweeper',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(this.sweepFunction, { retryAttempts: 0 })],
    });

    this.batchDeadLetterAlarm = this.deadLetterAlarm(
      'BatchDeadLettersAlarm',
      this.batchDeadLetterQueue,
      'dispatch batches',
    );
    this.flushDeadLetterAlarm = this.deadLetterAlarm(
      'FlushDeadLettersAlarm',
      this.flushDeadLetterQueue,
      'flush signals or stream checks',
    );
  }

  /** A dispatch job (flush consumer, sweeper): the table read-write, the secret, and SendMessage on both queues. */
  private jobFunction(props: DispatchQueuesProps, id: string, job: string, description: string): ApiFunction {
    const fn = ApiFunction.wired(this, id, props, 'readWrite', {
      entry: jobEntry(job),
      timeout: FLUSH_TIMEOUT,
      description,
    });
    this.bindInputWriter(fn);
    return fn;
  }

  /** The `dispatchInputs` routes: they seal and send batches, or send flush signals. */
  bindInputWriter(fn: ApiFunction): void {
    this.bindQueues(fn, SEND, SEND);
  }

  /** The `dispatch` routes: claims, heartbeats, completions and failures. */
  bindWorkerApi(fn: ApiFunction): void {
    this.bindQueues(fn, CLAIM, SEND);
  }

  /**
   * Sets DISPATCH_QUEUE_URL and FLUSH_QUEUE_URL and grants exactly these actions on each
   * queue. (Queue.grant adds no KMS permission; SSE-SQS needs none.)
   */
  private bindQueues(fn: ApiFunction, batchActions: string[], flushActions: string[]): void {
    fn.addEnvironment('DISPATCH_QUEUE_URL', this.batchQueue.queueUrl);
    fn.addEnvironment('FLUSH_QUEUE_URL', this.flushQueue.queueUrl);
    this.batchQueue.grant(fn, ...batchActions);
    this.flushQueue.grant(fn, ...flushActions);
  }

  private deadLetterAlarm(id: string, queue: Queue, what: string): Alarm {
    return new Alarm(this, id, {
      alarmDescription: `Dead-lettered ${what}: messages visible on their dead-letter queue.`,
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      // SQS stops sending metrics for an empty, idle queue.
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}
