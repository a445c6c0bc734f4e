/**
 * The chat relay stack: the table (storage.ts), the HTTP API with one function per route
 * (api.ts, api-function.ts), the SSE event stream on a function URL (event-stream.ts), the
 * stream-timeout state machine (stream-timeouts.ts), the dispatch queues with their flush
 * consumer and sweeper (dispatch-queues.ts; the flush queue also carries the stream checks),
 * the tag catalog sweeper (tag-sweep.ts), the two readers of the table's stream — the search
 * index writer (search-index.ts) and the consumer of events' side effects: web push, webhooks,
 * auto-rename (event-effects.ts) — the VAPID key pair when push is on (web-push.ts), the web
 * app's bucket and deployment (web-hosting.ts), the CloudFront distribution that puts the web
 * app, the API and its stream under one base URL (edge.ts), the
 * secrets kept in the table — the instance secret when on, the origin-verify value CloudFront
 * adds to origin requests, the VAPID key pair when push is on — made at deploy time by one
 * custom resource (stored-secrets.ts), and the alarms (alarms.ts).
 *
 * Closed and capped by default: the instance secret on and required by every non-public route
 * (`-c allowOpenAccess=true` opts out, with a synth warning), the event stream's function URL
 * answering only requests that came through CloudFront and holding at most STREAM_CONCURRENCY
 * instances, API Gateway's stage throttle, the table protected from deletion, and alarms that
 * notify an optional SNS topic.
 * Environment-agnostic: no account or region lookups. The deployer's inputs (the configuration,
 * the `-c` values) are checked and prepared in deployment-inputs.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotations, App, AssetStaging, CfnOutput, Stack, Validations } from 'aws-cdk-lib';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { Keys } from '../functions/store/keys.js';
import type { InstanceConfig } from '../functions/platform/instance-config.js';
import { Alarms } from './constructs/alarms.js';
import { Api } from './constructs/api.js';
import type { FunctionWiring } from './constructs/api-function.js';
import { DispatchQueues } from './constructs/dispatch-queues.js';
import { projectRoot } from './constructs/function-asset.js';
import { prebuildBundles } from './constructs/local-bundle.js';
import { Edge } from './constructs/edge.js';
import { EventEffects } from './constructs/event-effects.js';
import type { EdgeDomain } from './constructs/edge.js';
import { EventStream } from './constructs/event-stream.js';
import { MediaBucket } from './constructs/media-bucket.js';
import { MEDIA_UPLOAD_PATH } from './web-policy.js';
import { Storage } from './constructs/storage.js';
import { ORIGIN_VERIFY_HEADER_NAME, StoredSecrets } from './constructs/stored-secrets.js';
import { SearchIndex } from './constructs/search-index.js';
import { StreamDeadLetters } from './constructs/stream-consumer.js';
import { StreamTimeouts } from './constructs/stream-timeouts.js';
import { TagSweep } from './constructs/tag-sweep.js';
import { WebHosting } from './constructs/web-hosting.js';
import { WebPush } from './constructs/web-push.js';
import { STREAM_CONCURRENCY, streamRoute } from './routes.js';
import {
  DeploymentConfigError,
  apiThrottle,
  closedConfig,
  instanceConfigVariable,
  loggingEnvironment,
} from './deployment-inputs.js';

export interface ChatRelayStackProps extends StackProps {
  /** The validated instance configuration (resolveConfig). Its secrets are stripped here. */
  config: InstanceConfig;
  /** @default the version in package.json */
  serviceVersion?: string;
  /**
   * The folder of the static web app the base URL serves, index.html at its top: web/dist, or the
   * build `-c webDir=PATH` names (bin/app.ts resolves it: lib/web-build.ts resolveWebDir).
   */
  webDir: string;
  /**
   * `webDir` is another build than ours (`-c webDir` naming anything but web/dist): its pages' CSP
   * allows inline styles, never inline scripts (lib/web-policy.ts contentSecurityPolicy).
   * @default false
   */
  foreignBuild?: boolean | undefined;
  /** A custom domain for the single base URL (its ACM certificate in us-east-1); none → *.cloudfront.net. */
  domain?: EdgeDomain | undefined;
  /**
   * The functions' log level (`-c logLevel=`): DEBUG, INFO, WARN or ERROR. @default WARN: errors
   * and warnings always, the per-request INFO line only in sampled invocations (logSampleRate).
   */
  logLevel?: string | undefined;
  /**
   * The share of invocations that log everything at DEBUG (`-c logSampleRate=`, 0 to 1; Powertools
   * sampling). @default 0.01. With WARN, 1% of requests keep their request line: about 20 MB of
   * CloudWatch ingestion (~$0.01) a month for the typical workload, against ~$1.5 with every line.
   */
  logSampleRate?: string | number | undefined;
  /**
   * `-c allowOpenAccess=true`: deploy the configuration's security settings as written, which by
   * the contract's defaults means no instance secret at all (a synth warning says what is open).
   * @default false: the instance secret is on (generated unless its item exists) and every route but the
   * public ones (health, the API description) requires it, reads included.
   */
  allowOpenAccess?: boolean | undefined;
  /** API Gateway's stage throttle (`-c apiThrottleRate=`, `-c apiThrottleBurst=`). @default DEFAULT_API_THROTTLE */
  apiThrottleRate?: string | number | undefined;
  apiThrottleBurst?: string | number | undefined;
  /** Complete ARN of an existing SNS topic every alarm notifies (`-c alarmTopicArn=`). */
  alarmTopicArn?: string | undefined;
  /** An address to notify: the stack makes a topic and subscribes it (`-c alarmEmail=`; confirm the mail). */
  alarmEmail?: string | undefined;
  /**
   * `-c withoutAlarms=true`: no CloudWatch alarm at all (a synth warning says so). The alarms'
   * 11 metrics are $1.10 of the $1.43 an idle deployment costs a month (`npm run cost`).
   * @default false
   */
  withoutAlarms?: boolean | undefined;
}

const SNS_TOPIC_ARN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** The alarms' topic from the stack props: an existing one, a new one for an address, or none. */
function alarmTopic(scope: Construct, arn: string | undefined, email: string | undefined): ITopic | undefined {
  const topicArn = arn?.trim() || undefined;
  const address = email?.trim() || undefined;
  if (topicArn && address) {
    throw new DeploymentConfigError('Give -c alarmTopicArn or -c alarmEmail, not both.');
  }
  if (topicArn) {
    if (!SNS_TOPIC_ARN.test(topicArn)) {
      throw new DeploymentConfigError(`alarmTopicArn must be the ARN of an SNS topic, got "${topicArn}".`);
    }
    return Topic.fromTopicArn(scope, 'AlarmTopic', topicArn);
  }
  if (!address) return undefined;
  if (!EMAIL.test(address)) throw new DeploymentConfigError(`alarmEmail must be an email address, got "${address}".`);
  const topic = new Topic(scope, 'AlarmTopic', { displayName: 'Chat relay alarms', enforceSSL: true });
  topic.addSubscription(new EmailSubscription(address));
  Validations.of(topic).acknowledge({
    id: 'AwsSolutions-SNS2',
    reason:
      'Alarm notifications carry alarm names and states only. CloudWatch cannot publish to a topic encrypted ' +
      'with the AWS managed key, and a customer managed key would cost more than every other idle resource of ' +
      'the stack together.',
  });
  return topic;
}

export class ChatRelayStack extends Stack {
  readonly storage: Storage;
  readonly media: MediaBucket;
  readonly api: Api;
  readonly eventStream: EventStream;
  readonly streamTimeouts: StreamTimeouts;
  readonly dispatchQueues: DispatchQueues;
  readonly tagSweep: TagSweep;
  readonly web: WebHosting;
  readonly edge: Edge;
  readonly secrets: StoredSecrets;
  readonly webPush: WebPush | undefined;
  readonly searchIndex: SearchIndex;
  readonly streamDeadLetters: StreamDeadLetters;
  readonly eventEffects: EventEffects;
  /** Absent with `withoutAlarms`. */
  readonly alarms: Alarms | undefined;
  readonly alarmTopic: ITopic | undefined;

  constructor(scope: Construct, id: string, props: ChatRelayStackProps) {
    const {
      config,
      serviceVersion,
      webDir,
      foreignBuild,
      domain,
      logLevel,
      logSampleRate,
      allowOpenAccess,
      apiThrottleRate,
      apiThrottleBurst,
      alarmTopicArn,
      alarmEmail,
      withoutAlarms,
      ...stackProps
    } = props;
    super(scope, id, { description: 'Chat relay for AI agents (OpenGram API v1)', ...stackProps });
    // Every function's bundle built at once, before the functions are made (local-bundle.ts says why).
    if (this.bundlingRequired) {
      // Never synthesized (under the CLI an app synthesizes itself at exit into CDK_OUTDIR, over
      // the real one), in a folder of its own for what it stages, and with bundling off over the
      // CLI's context (CDK_CONTEXT_JSON names every stack for bundling).
      const outdir = mkdtempSync(join(tmpdir(), 'chat-relay-prebuild-'));
      try {
        prebuildBundles(projectRoot, () => {
          const app = new App({ autoSynth: false, outdir, postCliContext: { 'aws:cdk:bundling-stacks': [] } });
          return new ChatRelayStack(app, id, props);
        });
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
      // CDK keeps staged assets in a cache of the process: none of the copy's, staged with bundling
      // skipped, may stand for one of this stack's.
      AssetStaging.clearAssetHashCache();
    }
    // Closed unless the deployer opts out: the secret on, and required by reads too.
    const deployed = allowOpenAccess ? config : closedConfig(config);
    const secretEnabled = deployed.security.instanceSecretEnabled;
    if (allowOpenAccess && (!secretEnabled || !deployed.security.readEndpointsRequireInstanceSecret)) {
      Annotations.of(this).addWarningV2(
        'chat-relay:open-access',
        secretEnabled
          ? 'allowOpenAccess: every read route (chats, messages, media, search) answers without the instance ' +
              'secret; writes and the event stream require it.'
          : 'allowOpenAccess: no instance secret. Anyone who finds the URL can read, write and stream every ' +
              'chat, and spend on this account within the stage throttle. Remove -c allowOpenAccess to close it.',
      );
    }
    const throttle = apiThrottle(apiThrottleRate, apiThrottleBurst);

    const instanceConfig = instanceConfigVariable(deployed, secretEnabled);

    this.storage = new Storage(this, 'Storage');
    this.media = new MediaBucket(this, 'Media');
    // The secrets, in the table: made on the first deploy, kept after (stored-secrets.ts).
    this.secrets = new StoredSecrets(this, 'Secrets', {
      table: this.storage.table,
      secrets: [
        ...(secretEnabled ? (['INSTANCE'] as const) : []),
        'ORIGIN_VERIFY',
        ...(config.push.enabled ? (['VAPID'] as const) : []),
      ],
    });
    if (secretEnabled && config.security.instanceSecret !== '') {
      Annotations.of(this).addWarningV2(
        'chat-relay:instance-secret-generated',
        'The instance secret given in the configuration or OPENGRAM_INSTANCE_SECRET is not deployed (a secret value ' +
          'never goes into the template). The first deploy generates one in the table unless its item exists: ' +
          'read it, or put your own, with `aws dynamodb get-item` / `put-item` on the key SECRET#INSTANCE ' +
          '(docs/deployment.md, "Secrets in the table").',
      );
    }

    // Web push when enabled: the VAPID key pair (made once, in the table); the effects consumer sends.
    this.webPush = config.push.enabled ? new WebPush(this, 'Push', { secrets: this.secrets }) : undefined;

    // What every function gets: the table, the shared environment, whether the secret is on.
    const wiring: FunctionWiring = {
      table: this.storage.table,
      instanceSecret: secretEnabled,
      environment: {
        SERVICE_VERSION: serviceVersion ?? packageVersion(),
        INSTANCE_CONFIG: instanceConfig,
        ...loggingEnvironment(logLevel, logSampleRate),
        ...(secretEnabled ? { INSTANCE_SECRET_IN_TABLE: '1' } : {}),
        ...(this.webPush ? { VAPID_PUBLIC_KEY: this.webPush.publicKey } : {}),
      },
    };
    this.dispatchQueues = new DispatchQueues(this, 'Dispatch', wiring);
    // The stream checks ride on the flush queue: its one event source runs them too.
    this.streamTimeouts = new StreamTimeouts(this, 'StreamTimeouts', {
      ...wiring,
      checkQueue: this.dispatchQueues.flushQueue,
      checkConsumer: this.dispatchQueues.flushFunction,
    });
    this.tagSweep = new TagSweep(this, 'Tags', wiring);
    // The table stream's two readers, and the one dead-letter queue they share (stream-consumer.ts).
    this.streamDeadLetters = new StreamDeadLetters(this, 'StreamDeadLetters');
    this.searchIndex = new SearchIndex(this, 'Search', { ...wiring, deadLetters: this.streamDeadLetters });
    // Push, webhooks and auto-rename: one reader of the table's stream (event-effects.ts says why).
    this.eventEffects = new EventEffects(this, 'Effects', {
      ...wiring,
      deadLetters: this.streamDeadLetters,
      webPush: this.webPush,
    });
    this.api = new Api(this, 'Api', {
      ...wiring,
      secrets: this.secrets,
      throttle,
      streamTimeouts: this.streamTimeouts,
      dispatchQueues: this.dispatchQueues,
      mediaBucket: this.media,
      webPush: this.webPush,
      searchIndex: this.searchIndex,
    });
    // The route table's streaming entry: a response-streaming function URL, not an API Gateway route.
    this.eventStream = new EventStream(this, 'EventStream', { ...wiring, route: streamRoute, secrets: this.secrets });

    this.web = new WebHosting(this, 'Web', { webDir, foreignBuild, mediaOrigin: this.media.origin });
    this.edge = new Edge(this, 'Edge', {
      web: this.web.defaultBehavior(),
      apiEndpoint: this.api.httpApi.apiEndpoint,
      streamUrl: this.eventStream.functionUrl,
      streamPath: streamRoute.path,
      domain,
      originHeaders: { [ORIGIN_VERIFY_HEADER_NAME]: this.secrets.originVerifyValue },
      mediaUpload: { path: MEDIA_UPLOAD_PATH, behavior: this.media.uploadBehavior() },
    });

    if (withoutAlarms) {
      if (alarmTopicArn || alarmEmail) {
        throw new DeploymentConfigError(
          'withoutAlarms leaves nothing to notify: drop -c alarmTopicArn / -c alarmEmail.',
        );
      }
      // The dead-letter alarms are made with their queues (dispatch-queues.ts, stream-consumer.ts).
      for (const alarm of this.node.findAll().filter((c): c is Alarm => c instanceof Alarm)) {
        alarm.node.scope?.node.tryRemoveChild(alarm.node.id);
      }
      Annotations.of(this).addWarningV2(
        'chat-relay:no-alarms',
        'withoutAlarms: no CloudWatch alarm watches the API, the functions, the table, the state machine or the ' +
          'dead-letter queues. Failures only show in the logs and the queues.',
      );
    }
    this.alarms = withoutAlarms
      ? undefined
      : new Alarms(this, 'Alarms', {
          httpApi: this.api.httpApi,
          streamFunction: this.eventStream.function,
          streamConcurrency: STREAM_CONCURRENCY,
          table: this.storage.table,
          stateMachine: this.streamTimeouts.stateMachine,
        });
    // Every alarm of the stack (these and the dead-letter alarms) notifies the topic, if any.
    this.alarmTopic = alarmTopic(this, alarmTopicArn, alarmEmail);
    if (this.alarmTopic) {
      const action = new SnsAction(this.alarmTopic);
      for (const construct of this.node.findAll()) if (construct instanceof Alarm) construct.addAlarmAction(action);
      new CfnOutput(this, 'AlarmTopicArn', {
        value: this.alarmTopic.topicArn,
        description: 'SNS topic every alarm notifies',
      });
    }

    new CfnOutput(this, 'BaseUrl', {
      value: this.edge.url,
      description:
        'The base URL clients use, through CloudFront: the web app at /, the API under /api/v1 and its event ' +
        'stream (set server.publicBaseUrl to it for web push)',
    });
    new CfnOutput(this, 'WebBucketName', {
      value: this.web.bucket.bucketName,
      description: 'Private bucket of the web app served at BaseUrl (written by the deploy only)',
    });
    new CfnOutput(this, 'ApiUrl', {
      value: this.api.url,
      description: 'The HTTP API alone (no event stream); the API lives under /api/v1',
    });
    new CfnOutput(this, 'EventsUrl', {
      value: this.eventStream.url,
      description:
        'Event stream (SSE) function URL: it answers only requests that came through BaseUrl (the origin-verify ' +
        'header); <EventsUrl>api/v1/events/stream (the function ignores the path)',
    });
    new CfnOutput(this, 'TableName', { value: this.storage.table.tableName });
    new CfnOutput(this, 'MediaBucketName', {
      value: this.media.bucket.bucketName,
      description: 'Private bucket of media originals and thumbnails',
    });
    new CfnOutput(this, 'SearchIndexBucketName', {
      value: this.searchIndex.bucket.bucketName,
      description: 'Private bucket of the search index segments (derived from the table; rebuildable)',
    });
    new CfnOutput(this, 'StreamTimeoutStateMachineArn', {
      value: this.streamTimeouts.stateMachine.stateMachineArn,
      description: 'State machine that cancels abandoned message streams',
    });
    new CfnOutput(this, 'DispatchQueueUrl', {
      value: this.dispatchQueues.batchQueue.queueUrl,
      description: 'FIFO queue of sealed dispatch batches (claims long-poll it)',
    });
    new CfnOutput(this, 'FlushQueueUrl', {
      value: this.dispatchQueues.flushQueue.queueUrl,
      description:
        'Queue of delayed flush signals (batched_sequential sealing) and of delayed stream checks (stream ' +
        'timeouts); its consumer is the Flush function',
    });
    new CfnOutput(this, 'DispatchDeadLetterQueueName', {
      value: this.dispatchQueues.batchDeadLetterQueue.queueName,
      description: 'Dead-letter queue of the dispatch batch queue (alarmed when not empty)',
    });
    new CfnOutput(this, 'FlushDeadLetterQueueName', {
      value: this.dispatchQueues.flushDeadLetterQueue.queueName,
      description: 'Dead-letter queue of the flush queue: flush signals and stream checks (alarmed when not empty)',
    });
    new CfnOutput(this, 'StreamDeadLetterQueueName', {
      value: this.streamDeadLetters.queue.queueName,
      description:
        "Dead-letter queue of the table stream's consumers, the search writer and the effects consumer (alarmed " +
        'when not empty; each record names its function)',
    });
    if (secretEnabled) {
      // Where to read the instance secret (never the value: docs/deployment.md, "Secrets in the table").
      const key = Keys.generatedSecret('INSTANCE');
      new CfnOutput(this, 'InstanceSecretCommand', {
        value:
          `aws dynamodb get-item --consistent-read --table-name ${this.storage.table.tableName} --key ` +
          `'{"pk":{"S":"${key.pk}"},"sk":{"S":"${key.sk}"}}' --query Item.value.S --output text`,
        description: 'Prints the instance secret (kept in the table, never in the template or an output)',
      });
    }
  }
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}
