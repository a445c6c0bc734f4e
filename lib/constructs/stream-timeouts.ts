/**
 * The stream timeouts (contract §4.2), in two stages (functions/platform/stream-timer.ts):
 * 1. the routes marked `streamTimer` put one delayed `{ messageId }` message per new stream on
 *    the dispatch flush queue (`bindStarter`), which carries these stream checks beside its
 *    flush signals (lib/constructs/dispatch-queues.ts): one SQS event source mapping for both,
 *    since an idle mapping long-polls all month (~648,000 requests, $0.26). The flush queue's
 *    consumer (functions/jobs/flush.ts) runs the check (functions/jobs/check-stream.ts) once the
 *    timeout has passed: a stream over by then (most: a reply streams for seconds) or overdue
 *    (abandoned: cancelled there) costs no state machine execution. That consumer gets the
 *    state machine's ARN and StartExecution here (`checkConsumer`);
 * 2. a stream still active at its check gets one Standard execution, named by the message id,
 *    with `{ messageId, waitSeconds }`: it waits, runs the expiry function
 *    (functions/jobs/expire-stream.ts), and waits again for as long as that function says,
 *    until the stream is over.
 * Correctness does not rest on either: reads and writes also treat an overdue stream as
 * cancelled.
 */
import { Duration, Validations } from 'aws-cdk-lib';
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
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry, logicalIdOf } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export interface StreamTimeoutsProps extends FunctionWiring {
  /**
   * The queue the stream checks travel on: the dispatch flush queue (DispatchQueues.flushQueue),
   * shared with the flush signals. Its visibility (6x its consumer's timeout), retention (14 days,
   * far past a check's 900 s at most) and maxReceiveCount (5, CHECK_MAX_RECEIVES) suit a check: a
   * failed check comes back after the visibility (180 s; the checks' own queue had 60 s), and
   * meanwhile reads and writes expire the stream lazily.
   */
  checkQueue: IQueue;
  /** Its consumer (DispatchQueues.flushFunction), which runs the checks and may start the loop. */
  checkConsumer: ApiFunction;
}

/**
 * Upper bound of one execution. A stream still active after a day loses its timer and is
 * expired lazily; it also keeps an execution well under the 25,000-event history limit for
 * any timeout of 35 seconds or more (about ten events per round).
 */
const EXECUTION_TIMEOUT = Duration.days(1);

/**
 * A check reads the stream and may end it (waiting up to about 1.4 s for chunk writes in
 * flight) or start an execution (CONTROL_PLANE_BUDGET): the least function timeout its consumer
 * may have. The flush consumer has 30 s (FLUSH_TIMEOUT); records of a batch run side by side.
 */
export const CHECK_TIMEOUT = Duration.seconds(10);

export class StreamTimeouts extends Construct {
  readonly expiryFunction: ApiFunction;
  readonly stateMachine: StateMachine;
  /** The dispatch flush queue, which carries the stream checks (props.checkQueue). */
  readonly checkQueue: IQueue;

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

    // Stage 1: the delayed checks ride on the flush queue; its consumer runs them and hands a
    // stream still active to the state machine. A check dead-lettered there (after
    // CHECK_MAX_RECEIVES) trips the flush dead-letter alarm; the stream is still expired lazily.
    const consumerTimeout = props.checkConsumer.timeout?.toSeconds() ?? 3;
    if (consumerTimeout < CHECK_TIMEOUT.toSeconds()) {
      throw new Error(
        `The stream checks' consumer times out after ${consumerTimeout} s; a check may take ` +
          `${CHECK_TIMEOUT.toSeconds()} s.`,
      );
    }
    this.checkQueue = props.checkQueue;
    props.checkConsumer.addEnvironment('STREAM_TIMEOUT_STATE_MACHINE_ARN', this.stateMachine.stateMachineArn);
    this.stateMachine.grantStartExecution(props.checkConsumer);

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

  /**
   * A `streamTimer` route: FLUSH_QUEUE_URL (the queue of the checks) and sqs:SendMessage on it,
   * nothing more (SSE-SQS needs no KMS grant).
   */
  bindStarter(fn: ApiFunction): void {
    fn.addEnvironment('FLUSH_QUEUE_URL', this.checkQueue.queueUrl);
    this.checkQueue.grant(fn, 'sqs:SendMessage');
  }
}
