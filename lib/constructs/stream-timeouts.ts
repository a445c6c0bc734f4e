/**
 * The stream timeouts (contract §4.2), in two stages (functions/platform/stream-timer.ts):
 * 1. the routes marked `streamTimer` put one delayed message per new stream on the
 *    stream-check queue (`bindStarter`); its consumer (functions/jobs/check-stream.ts) looks at
 *    the stream once the timeout has passed: a stream over by then (most: a reply streams for
 *    seconds) or overdue (abandoned: cancelled there) costs no state machine execution;
 * 2. a stream still active at its check gets one Standard execution, named by the message id,
 *    with `{ messageId, waitSeconds }`: it waits, runs the expiry function
 *    (functions/jobs/expire-stream.ts), and waits again for as long as that function says,
 *    until the stream is over.
 * Correctness does not rest on either: reads and writes also treat an overdue stream as
 * cancelled.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  DefinitionBody,
  JitterType,
  LogLevel,
  StateMachine,
  StateMachineType,
  Succeed,
  Wait,
  WaitTime,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry, logicalIdOf } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export type StreamTimeoutsProps = FunctionWiring;

/**
 * Upper bound of one execution. A stream still active after a day loses its timer and is
 * expired lazily; it also keeps an execution well under the 25,000-event history limit for
 * any timeout of 35 seconds or more (about ten events per round).
 */
const EXECUTION_TIMEOUT = Duration.days(1);

/** A check reads the stream and may end it (waiting up to about 1.4 s for chunk writes in flight). */
export const CHECK_TIMEOUT = Duration.seconds(10);

/**
 * AWS guidance for SQS event sources: visibility at least six times the function timeout. A
 * failed check comes back after it; meanwhile reads and writes expire the stream lazily.
 */
const CHECK_VISIBILITY = Duration.seconds(CHECK_TIMEOUT.toSeconds() * 6);

/**
 * A check is idempotent and cheap to redo; five failed runs means something is wrong. The
 * same as CHECK_MAX_RECEIVES of functions/platform/stream-timer.ts, which the local stand-in follows.
 */
const CHECK_MAX_RECEIVES = 5;

export class StreamTimeouts extends Construct {
  readonly expiryFunction: ApiFunction;
  readonly stateMachine: StateMachine;
  readonly checkQueue: Queue;
  readonly checkDeadLetterQueue: Queue;
  readonly checkFunction: ApiFunction;

  constructor(scope: Construct, id: string, props: StreamTimeoutsProps) {
    super(scope, id);

    this.expiryFunction = ApiFunction.wired(this, 'ExpireStream', props, 'readWrite', {
      entry: jobEntry('expire-stream'),
      description: 'Cancels a stream idle longer than server.streamTimeoutSeconds (stream-timeout state machine)',
    });

    // Input and loop state: { messageId, waitSeconds, ... } (the function returns the same shape).
    const wait = new Wait(this, 'WaitForIdleTimeout', { time: WaitTime.secondsPath('$.waitSeconds') });
    const check = new LambdaInvoke(this, 'ExpireIfIdle', {
      lambdaFunction: this.expiryFunction,
      // The state output is the function's return value itself.
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    });
    check.addRetry({
      errors: [
        'Lambda.ServiceException',
        'Lambda.AWSLambdaException',
        'Lambda.SdkClientException',
        'Lambda.TooManyRequestsException',
        'Lambda.ClientExecutionTimeoutException',
      ],
      interval: Duration.seconds(2),
      maxAttempts: 6,
      backoffRate: 2,
      maxDelay: Duration.seconds(60),
      jitterStrategy: JitterType.FULL,
    });
    // Errors of the function itself (e.g. DynamoDB throttling); its write is conditional, so a
    // repeated check is harmless.
    check.addRetry({
      errors: ['States.TaskFailed'],
      interval: Duration.seconds(5),
      maxAttempts: 3,
      backoffRate: 2,
      jitterStrategy: JitterType.FULL,
    });
    const isOver = new Choice(this, 'IsStreamOver')
      .when(Condition.booleanEquals('$.done', true), new Succeed(this, 'StreamOver'))
      .otherwise(wait);

    const logs = new LogGroup(this, 'StateMachineLogs', { retention: RetentionDays.ONE_MONTH });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      comment: 'Cancels an abandoned message stream (contract §4.2)',
      definitionBody: DefinitionBody.fromChainable(wait.next(check).next(isOver)),
      timeout: EXECUTION_TIMEOUT,
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ERROR, includeExecutionData: true },
    });

    // Stage 1: the delayed checks. SSE-SQS (no key to grant or pay for), TLS only. A dead
    // letter only means a stream left to lazy expiry; no alarm (one would cost $0.10 a month).
    const common = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true };
    this.checkDeadLetterQueue = new Queue(this, 'CheckDeadLetters', { ...common, retentionPeriod: Duration.days(14) });
    this.checkQueue = new Queue(this, 'Checks', {
      ...common,
      visibilityTimeout: CHECK_VISIBILITY,
      // A check is due at most 900 s (SQS's longest delay) after it is sent.
      retentionPeriod: Duration.days(1),
      deadLetterQueue: { queue: this.checkDeadLetterQueue, maxReceiveCount: CHECK_MAX_RECEIVES },
    });
    this.checkFunction = ApiFunction.wired(this, 'CheckStream', props, 'readWrite', {
      entry: jobEntry('check-stream'),
      timeout: CHECK_TIMEOUT,
      description: 'Checks a new stream once its timeout has passed; starts the state machine if still active',
    });
    this.checkFunction.addEnvironment('STREAM_TIMEOUT_STATE_MACHINE_ARN', this.stateMachine.stateMachineArn);
    this.stateMachine.grantStartExecution(this.checkFunction);
    // Grants the poller's ReceiveMessage, DeleteMessage, ChangeMessageVisibility, GetQueueAttributes.
    // No maximum concurrency: with it Lambda cannot scale an idle poller down from 5 long-polls
    // to 2 (the idle queue's only cost: 260,000–650,000 requests, $0.10–0.26 a month).
    this.checkFunction.addEventSource(
      new SqsEventSource(this.checkQueue, {
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(0),
        reportBatchItemFailures: true,
      }),
    );

    Validations.of(this.stateMachine).acknowledge(
      {
        id: 'AwsSolutions-SF1',
        reason:
          'Failed and timed-out executions are logged (level ERROR, with their input) and alarmed (alarms.ts); ' +
          'logging ALL would write about ten events per round of every streaming message for no extra insight, ' +
          'and X-Ray traces each execution.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Step Functions needs the log-delivery actions (logs:CreateLogDelivery and related) and the X-Ray actions ' +
          '(xray:PutTraceSegments and related), which support no resource scoping.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.expiryFunction)}.Arn>:*]`,
        reason:
          'Invoking the versions and aliases of the expiry function; the wildcard is limited to that one function.',
      },
    );
  }

  /** A `streamTimer` route: STREAM_CHECK_QUEUE_URL and SendMessage on the check queue (SSE-SQS needs no KMS grant). */
  bindStarter(fn: ApiFunction): void {
    fn.addEnvironment('STREAM_CHECK_QUEUE_URL', this.checkQueue.queueUrl);
    this.checkQueue.grant(fn, 'sqs:SendMessage');
  }
}
