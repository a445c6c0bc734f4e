/**
 * The stack's alarms, beside the dead-letter alarms of dispatch-queues.ts, search-index.ts and
 * event-effects.ts: every one of them notifies the optional SNS topic (`-c alarmTopicArn=` an
 * existing topic, or `-c alarmEmail=` a new topic with that address subscribed).
 *
 * - API 5xx: any 5xx answer of the HTTP API in 5 minutes (the contract has none to give).
 * - Lambda errors and throttles: any, in 5 minutes, over all functions of the account in the
 *   region (Lambda's metrics without a function dimension). One alarm each instead of two per
 *   function: CloudWatch bills an alarm per metric, and this stack has about 60 functions
 *   (~$12 a month of alarms), while a dedicated account, as recommended for the relay, makes the
 *   account-wide figure the stack's own.
 * - The event stream's concurrency: 80% of its reserved concurrency for 3 minutes in a row, the
 *   sign that viewers are about to be refused (each open stream holds an instance).
 * - DynamoDB throttling: any read or write throttle event on the table in 5 minutes.
 * - Stream-timeout state machine: any failed or timed-out execution in 5 minutes.
 */
import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';

export interface AlarmsProps {
  httpApi: HttpApi;
  streamFunction: IFunction;
  /** The stream function's reserved concurrency (event-stream.ts). */
  streamConcurrency: number;
  table: ITable;
  stateMachine: IStateMachine;
}

const FIVE_MINUTES = Duration.minutes(5);

/** The share of the stream's reserved concurrency that raises its alarm. */
export const STREAM_CONCURRENCY_ALARM_SHARE = 0.8;

export class Alarms extends Construct {
  readonly api5xx: Alarm;
  readonly lambdaErrors: Alarm;
  readonly lambdaThrottles: Alarm;
  readonly streamConcurrency: Alarm;
  readonly tableThrottles: Alarm;
  readonly stateMachineFailures: Alarm;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const anyIn = (alarmId: string, metric: IMetric, description: string) =>
      new Alarm(this, alarmId, {
        metric,
        alarmDescription: description,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });

    this.api5xx = anyIn(
      'Api5xx',
      props.httpApi.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      'The HTTP API answered 5xx (the contract has no 5xx to give: a bug, a timeout or a throttled function).',
    );
    const lambda = (metricName: string) =>
      new Metric({ namespace: 'AWS/Lambda', metricName, statistic: 'Sum', period: FIVE_MINUTES });
    this.lambdaErrors = anyIn(
      'LambdaErrors',
      lambda('Errors'),
      'Lambda functions failed (all functions of the account in this region; the function logs say which).',
    );
    this.lambdaThrottles = anyIn(
      'LambdaThrottles',
      lambda('Throttles'),
      'Lambda invocations were throttled (a reserved-concurrency cap or the account limit was reached).',
    );
    const streamLimit = Math.max(1, Math.floor(props.streamConcurrency * STREAM_CONCURRENCY_ALARM_SHARE));
    this.streamConcurrency = new Alarm(this, 'StreamConcurrency', {
      metric: props.streamFunction.metric('ConcurrentExecutions', {
        statistic: 'Maximum',
        period: Duration.minutes(1),
      }),
      alarmDescription:
        `At least ${streamLimit} of the event stream's ${props.streamConcurrency} reserved instances busy for 3 ` +
        'minutes: new streams will soon be refused.',
      threshold: streamLimit,
      evaluationPeriods: 3,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const tableMetric = (metricName: string) =>
      new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: props.table.tableName },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      });
    this.tableThrottles = anyIn(
      'TableThrottles',
      new MathExpression({
        expression: 'reads + writes',
        usingMetrics: { reads: tableMetric('ReadThrottleEvents'), writes: tableMetric('WriteThrottleEvents') },
        label: 'Throttle events',
        period: FIVE_MINUTES,
      }),
      'DynamoDB throttled reads or writes on the table.',
    );
    this.stateMachineFailures = anyIn(
      'StateMachineFailures',
      new MathExpression({
        expression: 'failed + timedOut',
        usingMetrics: {
          failed: props.stateMachine.metricFailed({ period: FIVE_MINUTES, statistic: 'Sum' }),
          timedOut: props.stateMachine.metricTimedOut({ period: FIVE_MINUTES, statistic: 'Sum' }),
        },
        label: 'Failed or timed-out executions',
        period: FIVE_MINUTES,
      }),
      'The stream-timeout state machine had failed or timed-out executions (abandoned streams may stay open).',
    );
  }
}
