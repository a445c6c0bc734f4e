/**
 * The stack's secrets, kept in its own table (SECRET#<name> items, functions/store/keys.ts) rather
 * than in Secrets Manager: the instance secret (contract §1.11) when it is on, the origin-verify value
 * CloudFront adds to origin requests, and the VAPID key pair when push is on (§7.7).
 *
 * Why the table: it holds every chat and message the instance secret protects, so whoever can read
 * the secret's item can already read everything it guards; an item costs nothing at rest (a Secrets
 * Manager secret $0.40 a month) and one read per container on the DynamoDB client every function
 * already loads. Who may reach which item is IAM's job, per partition (dynamodb:LeadingKeys,
 * api-function.ts bindStoredSecret and the Deny on every other SECRET# partition).
 *
 * One deploy-time custom resource (functions/jobs/stored-secrets.ts behind the CDK Provider framework)
 * makes each missing item with a conditional put and keeps any that exists (the owner's own value, an
 * earlier deploy's); it deletes nothing (the table is retained). It answers with the origin-verify
 * value and the VAPID public key, with NoEcho: the template and cdk.out hold only Fn::GetAtt.
 */
import { CustomResource, Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { Keys, STORED_SECRET_NAMES } from '../../functions/store/keys.js';
import type { StoredSecretName } from '../../functions/store/keys.js';
import { ApiFunction, jobEntry, logicalIdOf } from './api-function.js';

/** The custom origin header (functions/middleware/origin-verify.ts reads it in lower case). */
export const ORIGIN_VERIFY_HEADER_NAME = 'X-Origin-Verify';

export interface StoredSecretsProps {
  table: ITable;
  /** The secrets this deployment uses (ORIGIN_VERIFY always; INSTANCE and VAPID when on). */
  secrets: readonly StoredSecretName[];
}

export class StoredSecrets extends Construct {
  readonly table: ITable;
  readonly names: StoredSecretName[];
  /** The custom resource's function (deploy time only): may read and put the named items, nothing else. */
  readonly maker: ApiFunction;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: StoredSecretsProps) {
    super(scope, id);
    this.table = props.table;
    this.names = STORED_SECRET_NAMES.filter((name) => props.secrets.includes(name));
    this.maker = new ApiFunction(this, 'Maker', {
      entry: jobEntry('stored-secrets'),
      description: "Makes the stack's missing secrets in its table, keeps existing ones (deploy-time custom resource)",
      environment: { TABLE_NAME: props.table.tableName },
      timeout: Duration.seconds(30),
      memorySize: 256,
    });
    this.maker.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        resources: [props.table.tableArn],
        conditions: {
          'ForAllValues:StringEquals': {
            'dynamodb:LeadingKeys': this.names.map((name) => Keys.generatedSecret(name).pk),
          },
        },
      }),
    );
    const provider = new Provider(this, 'Provider', { onEventHandler: this.maker });
    Validations.of(provider).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "The CDK custom-resource framework's own function (deploy time only) comes with the basic execution role; " +
          'it calls the secrets maker and nothing else.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.maker)}.Arn>:*]`,
        reason: "The framework invokes the secrets maker's versions; the wildcard is limited to that one function.",
      },
      {
        id: 'AwsSolutions-L1',
        reason: "The CDK custom-resource framework picks its own function's runtime (deploy time only).",
      },
    );
    this.resource = new CustomResource(this, 'Secrets', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::StoredSecrets',
      // A change of the list (push turned on) runs an Update, which makes the new item.
      properties: { Secrets: this.names },
    });
  }

  /** The origin-verify value (a deploy-time token, masked by NoEcho): CloudFront's custom origin header. */
  get originVerifyValue(): string {
    return this.resource.getAttString('OriginVerify');
  }

  /** The VAPID public key (a deploy-time token): every function's VAPID_PUBLIC_KEY. Push enabled only. */
  get vapidPublicKey(): string {
    if (!this.names.includes('VAPID')) throw new Error('No VAPID key pair in this deployment (push is off)');
    return this.resource.getAttString('VapidPublicKey');
  }

  /** Lets `fn` read the named stored secret (STORED_SECRETS, the IAM grant and the Deny's exception). */
  bind(fn: ApiFunction, name: StoredSecretName): void {
    if (!this.names.includes(name)) throw new Error(`The stack keeps no ${name} secret`);
    fn.bindStoredSecret(this.table, name);
  }
}
