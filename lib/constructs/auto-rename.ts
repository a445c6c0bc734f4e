/**
 * Auto-rename (contract §10): the renamer (functions/jobs/auto-rename.ts), a consumer of the
 * table's stream whose event source mapping lets through only new events of finalized agent
 * messages (`message.created` and `message.streaming.complete` with role `agent` and
 * streamState `complete`), so no other write costs an invocation. It exists whatever the
 * deployed configuration says, because an administrator can turn auto-rename on at run time
 * (PATCH /config/admin); while it is off, an invocation reads no item. Failed records are
 * retried (bisected), then sent to a dead-letter queue, alarmed.
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

/** New event items of `eventType` that finalize an agent message (core/auto-rename.ts decides the rest). */
const finalizedAgentMessage = (eventType: string) =>
  FilterCriteria.filter({
    eventName: FilterRule.isEqual('INSERT'),
    dynamodb: {
      NewImage: {
        type: { S: FilterRule.isEqual('event') },
        eventType: { S: FilterRule.isEqual(eventType) },
        payload: {
          M: { role: { S: FilterRule.isEqual('agent') }, streamState: { S: FilterRule.isEqual('complete') } },
        },
      },
    },
  });

export class AutoRename extends Construct {
  readonly renamer: ApiFunction;
  readonly deadLetterQueue: Queue;
  readonly deadLetterAlarm: Alarm;

  constructor(scope: Construct, id: string, wiring: FunctionWiring & { table: ITable }) {
    super(scope, id);
    this.renamer = ApiFunction.wired(this, 'Renamer', wiring, 'readWrite', {
      entry: jobEntry('auto-rename'),
      description: 'Renames chats from their first messages after an agent message (DynamoDB stream consumer)',
      // Records run side by side, each at most one provider call of 15 s (AUTO_RENAME_TIMEOUT_MS).
      timeout: Duration.seconds(60),
      // Waiting on a provider's answer needs no CPU.
      memorySize: 512,
    });
    this.deadLetterQueue = new Queue(this, 'RenamerDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the renamer's dead-letter destination (records given up on), alarmed below.",
    });
    Validations.of(this.renamer.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Reading a DynamoDB stream needs dynamodb:ListStreams, which supports no resource scoping.',
    });
    this.renamer.addEventSource(
      new DynamoEventSource(wiring.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(0),
        bisectBatchOnError: true,
        retryAttempts: 3,
        // A title is wanted while the chat is new: give up on records older than an hour.
        maxRecordAge: Duration.hours(1),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [finalizedAgentMessage('message.created'), finalizedAgentMessage('message.streaming.complete')],
      }),
    );
    this.deadLetterAlarm = new Alarm(this, 'RenamerDeadLettersAlarm', {
      alarmDescription: 'Auto-renames given up on: records on the renamer dead-letter queue.',
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
