/**
 * What every consumer of the table's stream shares (search-index.ts, event-effects.ts): its event
 * source mapping, and ONE dead-letter queue for the records any of them gives up on, with one
 * alarm (no action attached) as soon as it holds anything. Each record there is Lambda's
 * on-failure record: its `requestContext.functionArn` names the consumer that gave up, and its
 * `DDBStreamBatchInfo` the stream range to read again. One queue rather than one per consumer:
 * CloudWatch bills every alarm metric ($0.10 a month each, whatever the traffic), and the records
 * already say whose they are. The stream has two readers at most (event-effects.ts says why): add
 * a consumer here only after reading that.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { DynamoEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { TableStreamMapping } from '../stream-mappings.js';
import type { ApiFunction } from './api-function.js';

/** The table stream consumers' dead-letter queue and its alarm. */
export class StreamDeadLetters extends Construct {
  readonly queue: Queue;
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.queue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the table stream consumers' dead-letter destination (records given up on), alarmed.",
    });
    this.alarm = new Alarm(this, 'Alarm', {
      alarmDescription:
        'Table stream records given up on: messages left out of the search index, or push, webhook or auto-rename ' +
        "work not done. Each record's requestContext.functionArn names the consumer, its DDBStreamBatchInfo the range.",
      metric: this.queue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }
}

/** A mapping's settings (lib/stream-mappings.ts, which the local runtime applies too) as the event source's props. */
export function mappingProps(mapping: TableStreamMapping): Omit<DynamoEventSourceProps, 'onFailure'> {
  return {
    startingPosition: StartingPosition[mapping.startingPosition],
    batchSize: mapping.batchSize,
    maxBatchingWindow: Duration.seconds(mapping.maxBatchingWindowSeconds),
    ...(mapping.parallelizationFactor === undefined ? {} : { parallelizationFactor: mapping.parallelizationFactor }),
    bisectBatchOnError: mapping.bisectBatchOnError,
    retryAttempts: mapping.retryAttempts,
    reportBatchItemFailures: mapping.reportBatchItemFailures,
    filters: mapping.filters.map((pattern) => FilterCriteria.filter(pattern)),
  };
}

/** Feeds `fn` from the table's stream; the records it gives up on go to `deadLetters`. */
export function consumeTableStream(
  fn: ApiFunction,
  table: ITable,
  deadLetters: StreamDeadLetters,
  source: Omit<DynamoEventSourceProps, 'onFailure'>,
): void {
  Validations.of(fn.role!).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'Reading a DynamoDB stream needs dynamodb:ListStreams, which supports no resource scoping.',
  });
  fn.addEventSource(new DynamoEventSource(table, { ...source, onFailure: new SqsDlq(deadLetters.queue) }));
}
