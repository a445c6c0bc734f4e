/**
 * What every consumer of the table's stream shares (search-index.ts, event-effects.ts): its event
 * source mapping with a dead-letter queue for records given up on, and an alarm (no action
 * attached) as soon as that queue holds anything. The stream has two readers at most
 * (event-effects.ts says why): add a consumer here only after reading that.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { DynamoEventSourceProps } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { TableStreamMapping } from '../stream-mappings.js';
import type { ApiFunction } from './api-function.js';

export interface StreamConsumerOptions extends Omit<DynamoEventSourceProps, 'onFailure'> {
  /** The dead-letter queue's construct id (the alarm's is this plus "Alarm"). */
  deadLetterId: string;
  /** Who gives records up (for cdk-nag's acknowledgement), e.g. "the index writer". */
  consumerName: string;
  /** The alarm's description: what is lost when it fires. */
  alarmDescription: string;
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

/** Feeds `fn` from the table's stream; returns its dead-letter queue and alarm. */
export function consumeTableStream(
  scope: Construct,
  fn: ApiFunction,
  table: ITable,
  options: StreamConsumerOptions,
): { deadLetterQueue: Queue; deadLetterAlarm: Alarm } {
  const { deadLetterId, consumerName, alarmDescription, ...source } = options;
  const deadLetterQueue = new Queue(scope, deadLetterId, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(deadLetterQueue).acknowledge({
    id: 'AwsSolutions-SQS3',
    reason: `This queue is ${consumerName}'s dead-letter destination (records given up on), alarmed.`,
  });
  Validations.of(fn.role!).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: 'Reading a DynamoDB stream needs dynamodb:ListStreams, which supports no resource scoping.',
  });
  fn.addEventSource(new DynamoEventSource(table, { ...source, onFailure: new SqsDlq(deadLetterQueue) }));
  const deadLetterAlarm = new Alarm(scope, `${deadLetterId}Alarm`, {
    alarmDescription,
    metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    }),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: TreatMissingData.NOT_BREACHING,
  });
  return { deadLetterQueue, deadLetterAlarm };
}
