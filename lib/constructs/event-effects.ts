/**
 * The side effects of persisted events (functions/jobs/event-effects.ts): web push (§7), outbound
 * webhooks (§6.6) and auto-rename (§10), from ONE consumer of the table's stream. DynamoDB Streams
 * serves at most two readers per shard without throttling (each Lambda event source mapping polls
 * every shard several times a second), and the search index writer is the other reader; a
 * consumer per effect would throttle them all and delay every notification.
 *
 * The mapping (its settings in lib/stream-mappings.ts, which the local runtime applies too) lets
 * through only new persisted event items: webhooks are runtime configuration and may list any
 * persisted type, so the filter cannot be narrower; push and auto-rename decide from the event
 * itself and cost no storage call for events that do not concern them. Batches of up to 10 with no batching window (push latency); a record whose effects hit a storage failure
 * is retried alone (partial batch failures), bisected, then sent to the stream consumers' alarmed dead-letter queue (stream-consumer.ts).
 * 512 MB: the function mostly waits on push services, hooks and providers; 5 minutes: a hook may
 * take 1 + maxRetries attempts of timeoutMs with back-off.
 */
import { Duration } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { ApiFunction, jobEntry } from './api-function.js';
import type { FunctionWiring } from './api-function.js';
import { tableStreamMappings } from '../stream-mappings.js';
import { consumeTableStream, mappingProps } from './stream-consumer.js';
import type { StreamDeadLetters } from './stream-consumer.js';
import type { WebPush } from './web-push.js';

export class EventEffects extends Construct {
  readonly consumer: ApiFunction;
  constructor(
    scope: Construct,
    id: string,
    props: FunctionWiring & { table: ITable; deadLetters: StreamDeadLetters; webPush?: WebPush | undefined },
  ) {
    super(scope, id);
    this.consumer = ApiFunction.wired(this, 'Consumer', props, 'readWrite', {
      entry: jobEntry('event-effects'),
      description: 'Web push, webhooks and auto-rename for persisted events (DynamoDB stream consumer)',
      timeout: Duration.seconds(tableStreamMappings.eventEffects.timeoutSeconds),
      memorySize: 512,
    });
    // Only when push is on may it read the VAPID key pair (the senders' grant).
    props.webPush?.bindSender(this.consumer);
    consumeTableStream(this.consumer, props.table, props.deadLetters, mappingProps(tableStreamMappings.eventEffects));
  }
}
