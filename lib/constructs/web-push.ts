/**
 * Web push (contract §7), present when the configuration enables push:
 * - the VAPID key pair in a Secrets Manager secret, made once by a custom resource on the
 *   first deploy (functions/jobs/vapid-keys.ts) and kept after; its public key is handed to
 *   every function (VAPID_PUBLIC_KEY: GET /config shows it), and only the senders may read
 *   the secret (bindSender);
 * - the notifications themselves are sent by the consumer of events' side effects
 *   (event-effects.ts), which this construct binds as a sender.
 */
import { CustomResource, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry, logicalIdOf } from './api-function.js';
import type { FunctionWiring } from './api-function.js';

export interface WebPushProps {
  /** Complete ARN of an existing secret holding `{ publicKey, privateKey }`; none → the stack makes one. */
  existingKeysSecretArn?: string | undefined;
}

export class WebPush extends Construct {
  readonly keysSecret: ISecret;
  /** The public key (a deploy-time token): every function's VAPID_PUBLIC_KEY. */
  readonly publicKey: string;

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

  /** A function that sends pushes: VAPID_SECRET_ARN and read access to the key pair. */
  bindSender(fn: ApiFunction): void {
    fn.addEnvironment('VAPID_SECRET_ARN', this.keysSecret.secretArn);
    this.keysSecret.grantRead(fn);
  }
}
