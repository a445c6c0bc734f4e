/**
 * The stream-timeout loop (contract §4.2): one Standard execution per streaming message,
 * started by the routes marked `streamTimer` (functions/platform/stream-timer.ts) with
 * `{ messageId, waitSeconds }`. It waits, runs the expiry function
 * (functions/jobs/expire-stream.ts), and waits again for as long as that function says,
 * until the stream is over. Correctness does not rest on it: reads and writes also treat an
 * overdue stream as cancelled.
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

export class StreamTimeouts extends Construct {
  readonly expiryFunction: ApiFunction;
  readonly stateMachine: StateMachine;

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
}
