/**
 * The search index (contract §9; docs/search.md): derived data, rebuilt from the table's events.
 * - a private bucket of immutable SQLite FTS5 segment files under `segments/`;
 * - the writer (functions/jobs/search-index.ts), a consumer of the table's stream whose event
 *   source mapping (lib/stream-mappings.ts, which the local runtime applies too) lets through only
 *   new message events that can carry searchable text, with reserved concurrency 1 (one writer;
 *   its manifest writes are conditional anyway), batches of up to 100 records gathered for a
 *   second, failed batches bisected and retried, then sent to the stream consumers' alarmed dead-letter
 *   queue (stream-consumer.ts);
 * - the readers (the `searchIndex` routes): read access to the segments and 2 GB of /tmp for
 *   their local copies (bindReader).
 */
import { Duration, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ABORT_INCOMPLETE_UPLOADS, privateBucket } from './private-bucket.js';
import { ApiFunction, jobEntry, arnInFinding } from './api-function.js';
import type { FunctionWiring } from './api-function.js';
import { tableStreamMappings } from '../stream-mappings.js';
import { consumeTableStream, mappingProps } from './stream-consumer.js';
import type { StreamDeadLetters } from './stream-consumer.js';

/** Every segment object lives under this prefix (functions/platform/search-storage.ts). */
export const SEGMENT_PREFIX = 'segments/';
/** /tmp of every function that keeps segment copies: 100,000 messages make about 60 MB of index. */
export const SEARCH_EPHEMERAL_MB = 2048;

export class SearchIndex extends Construct {
  readonly bucket: Bucket;
  readonly writer: ApiFunction;
  constructor(
    scope: Construct,
    id: string,
    wiring: FunctionWiring & { table: ITable; deadLetters: StreamDeadLetters },
  ) {
    super(scope, id);
    // Derived data, but message texts: kept with the table rather than deleted with the stack.
    this.bucket = privateBucket(this, 'Bucket', {
      lifecycleRules: [ABORT_INCOMPLETE_UPLOADS],
      whyNoAccessLogs:
        'Server access logs would add a second bucket and a write per request to a private bucket that only the ' +
        'index writer and the search route reach (both log every invocation).',
    });

    this.writer = ApiFunction.wired(this, 'Writer', wiring, 'readWrite', {
      entry: jobEntry('search-index'),
      description: 'Adds searchable messages to the search index (DynamoDB stream consumer, single writer)',
      timeout: Duration.seconds(tableStreamMappings.searchIndex.timeoutSeconds),
      memorySize: 1024,
      ephemeralStorageMb: SEARCH_EPHEMERAL_MB,
      reservedConcurrency: 1,
    });
    this.bind(this.writer, ['s3:GetObject', 's3:PutObject', 's3:DeleteObject']);
    // From the oldest record the stream keeps (24 hours): a new deployment indexes what it can.
    // One segment per second at most while messages flow: searchable within about 2 s.
    consumeTableStream(this.writer, wiring.table, wiring.deadLetters, mappingProps(tableStreamMappings.searchIndex));
  }

  /** A search route: SEARCH_BUCKET, GetObject on the segments, and room in /tmp for their copies. */
  bindReader(fn: ApiFunction): void {
    this.bind(fn, ['s3:GetObject']);
    (fn.node.defaultChild as CfnFunction).ephemeralStorage = { size: SEARCH_EPHEMERAL_MB };
  }

  private bind(fn: ApiFunction, actions: string[]): void {
    fn.addEnvironment('SEARCH_BUCKET', this.bucket.bucketName);
    fn.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions,
        resources: [this.bucket.arnForObjects(`${SEGMENT_PREFIX}*`)],
      }),
    );
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${arnInFinding(fn, this.bucket)}/${SEGMENT_PREFIX}*]`,
      reason:
        'Segment objects are named by time and id under this prefix (functions/platform/search-storage.ts); the ' +
        'wildcard covers that prefix of this one bucket only.',
    });
  }
}
