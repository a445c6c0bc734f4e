/**
 * Outbound webhooks (contract §6.6): the consumer (functions/jobs/webhooks.ts) on the table's
 * stream, whose event source mapping lets through only new persisted event items (the hooks are
 * runtime configuration, so the filter cannot name their event types; with no hook configured a
 * batch costs one short invocation). Batches of up to 10 events gathered for a second; a record
 * whose bookkeeping fails is retried alone (reportBatchItemFailures), bisected, then sent to an
 * alarmed dead-letter queue. 256 MB: the function mostly waits on the hooks' answers.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export class Webhooks extends Construct {
  readonly consumer: ApiFunction;
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, wiring: FunctionWiring & { table: ITable }) {
    super(scope, id);
    this.consumer = ApiFunction.wired(this, 'Consumer', wiring, 'readWrite', {
      entry: jobEntry('webhooks'),
      description: 'Delivers persisted events to the configured webhooks (DynamoDB stream consumer)',
      // 1 + maxRetries attempts of timeoutMs each, with back-off: ~30 s with the defaults.
      timeout: Duration.minutes(5),
      memorySize: 256,
    });
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the webhook consumer's dead-letter destination (records given up on), alarmed below.",
    });
    Validations.of(this.consumer.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Reading a DynamoDB stream needs dynamodb:ListStreams, which supports no resource scoping.',
    });
    this.consumer.addEventSource(
      new DynamoEventSource(wiring.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(1),
        bisectBatchOnError: true,
        retryAttempts: 3,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [
          FilterCriteria.filter({
            eventName: FilterRule.isEqual('INSERT'),
            dynamodb: { NewImage: { type: { S: FilterRule.isEqual('event') }, eventType: { S: FilterRule.exists() } } },
          }),
        ],
      }),
    );
    this.deadLetterAlarm = new Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: 'Webhook deliveries given up on: records on the webhook consumer dead-letter queue.',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
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
