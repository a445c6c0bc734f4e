/**
 * Web push (contract §7), present when the configuration enables push:
 * - the VAPID key pair in a Secrets Manager secret, made once by a custom resource on the
 *   first deploy (functions/jobs/vapid-keys.ts) and kept after; its public key is handed to
 *   every function (VAPID_PUBLIC_KEY: GET /config shows it), and only the senders may read
 *   the secret (bindSender);
 * - the notifier (functions/jobs/push-notify.ts), a consumer of the table's stream whose event
 *   source mapping lets through only new event items that can notify (agent messages created
 *   complete, completed agent streams, new requests), so no other write costs an invocation;
 *   failed records are retried (bisected) and then sent to a dead-letter queue, alarmed.
 */
import { CustomResource, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry, logicalIdOf } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export interface WebPushProps {
  /** Complete ARN of an existing secret holding `{ publicKey, privateKey }`; none → the stack makes one. */
  existingKeysSecretArn?: string | undefined;
}

/** The stream filter: which new items can notify (core/push.ts notificationFor decides the rest). */
const notifying = (eventType: string, payload?: Record<string, string>) =>
  FilterCriteria.filter({
    eventName: FilterRule.isEqual('INSERT'),
    dynamodb: {
      NewImage: {
        type: { S: FilterRule.isEqual('event') },
        eventType: { S: FilterRule.isEqual(eventType) },
        ...(payload
          ? {
              payload: {
                M: Object.fromEntries(Object.entries(payload).map(([k, v]) => [k, { S: FilterRule.isEqual(v) }])),
              },
            }
          : {}),
      },
    },
  });

export class WebPush extends Construct {
  readonly keysSecret: ISecret;
  /** The public key (a deploy-time token): every function's VAPID_PUBLIC_KEY. */
  readonly publicKey: string;
  notifier?: ApiFunction;
  deadLetterQueue?: Queue;
  deadLetterAlarm?: Alarm;

  constructor(scope: Construct, id: string, props: WebPushProps & Pick<FunctionWiring, 'table'>) {
    super(scope, id);
    if (props.existingKeysSecretArn) {
      this.keysSecret = Secret.fromSecretCompleteArn(this, 'Keys', props.existingKeysSecretArn);
    } else {
      const secret = new Secret(this, 'Keys', {
        description: 'VAPID key pair of the chat relay web push (contract §7.7), made on the first deploy',
        // A placeholder the key custom resource replaces with the pair on the first deploy.
        generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'placeholder' },
        // Browser subscriptions are bound to the public key: losing it loses every device.
        removalPolicy: RemovalPolicy.RETAIN,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Rotating the VAPID key pair invalidates every browser push subscription (contract §7.7: never ' +
          'regenerated while present).',
      });
      this.keysSecret = secret;
    }
    const maker = new ApiFunction(this, 'KeyMaker', {
      entry: jobEntry('vapid-keys'),
      description: 'Makes the VAPID key pair once, in its secret (deploy-time custom resource)',
      environment: { VAPID_SECRET_ARN: this.keysSecret.secretArn, TABLE_NAME: 'unused' },
      timeout: Duration.seconds(30),
      memorySize: 256,
    });
    this.keysSecret.grantRead(maker);
    this.keysSecret.grantWrite(maker);
    const provider = new Provider(this, 'KeyProvider', { onEventHandler: maker });
    Validations.of(provider).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "The CDK custom-resource framework's own function (deploy time only) comes with the basic execution role; " +
          'it calls the key maker and nothing else.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(maker)}.Arn>:*]`,
        reason: "The framework invokes the key maker's versions; the wildcard is limited to that one function.",
      },
      {
        id: 'AwsSolutions-L1',
        reason: "The CDK custom-resource framework picks its own function's runtime (deploy time only).",
      },
    );
    const keys = new CustomResource(this, 'KeyPair', { serviceToken: provider.serviceToken });
    this.publicKey = keys.getAttString('PublicKey');
  }

  /** The notifier on the table's stream (after the wiring exists: it needs the public key too). */
  addNotifier(wiring: FunctionWiring & { table: ITable }): void {
    const fn = ApiFunction.wired(this, 'Notifier', wiring, 'readWrite', {
      entry: jobEntry('push-notify'),
      description: 'Sends web push for notifying events (DynamoDB stream consumer)',
      // Deliveries to all devices in parallel, each at most 3 attempts of 5 s.
      timeout: Duration.seconds(60),
      memorySize: 512,
    });
    this.bindSender(fn);
    this.deadLetterQueue = new Queue(this, 'NotifierDeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: "This queue is the notifier's dead-letter destination (records given up on), alarmed below.",
    });
    Validations.of(fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Reading a DynamoDB stream needs dynamodb:ListStreams, which supports no resource scoping.',
    });
    fn.addEventSource(
      new DynamoEventSource(wiring.table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: 10,
        maxBatchingWindow: Duration.seconds(0),
        bisectBatchOnError: true,
        retryAttempts: 3,
        // A notification hours late is noise: give up on records older than an hour.
        maxRecordAge: Duration.hours(1),
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.deadLetterQueue),
        filters: [
          notifying('message.created', { role: 'agent', streamState: 'complete' }),
          notifying('message.streaming.complete', { role: 'agent', streamState: 'complete' }),
          notifying('request.created'),
        ],
      }),
    );
    this.deadLetterAlarm = new Alarm(this, 'NotifierDeadLettersAlarm', {
      alarmDescription: 'Push notifications given up on: records on the notifier dead-letter queue.',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.notifier = fn;
  }

  /** A function that sends pushes: VAPID_SECRET_ARN and read access to the key pair. */
  bindSender(fn: ApiFunction): void {
    fn.addEnvironment('VAPID_SECRET_ARN', this.keysSecret.secretArn);
    this.keysSecret.grantRead(fn);
  }
}
