/**
 * The media bucket (contract §2.4, §8; ARCHITECTURE.md "Media"): originals and thumbnails
 * under `uploads/`, private (public access blocked, TLS only, S3-managed encryption), kept on
 * stack deletion like the table. Only the media routes get it, each with the one action it
 * uses: downloads read, uploads put (and delete what a failed upload stored), deletion deletes.
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { ApiFunction } from './api-function.js';
import { logicalIdOf } from './api-function.js';

/** What a route does with the bucket (lib/routes.ts `mediaBucket`). */
export type MediaBucketUse = 'read' | 'write' | 'delete';

const ACTIONS: Record<MediaBucketUse, string[]> = {
  read: ['s3:GetObject'],
  write: ['s3:PutObject', 's3:DeleteObject'],
  delete: ['s3:DeleteObject'],
};

/** Every stored object lives under this prefix (§8.3 storage paths). */
export const MEDIA_PREFIX = 'uploads/';

export class MediaBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      removalPolicy: RemovalPolicy.RETAIN,
      // Multipart uploads the SDK started and never completed cost storage until aborted.
      lifecycleRules: [{ id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) }],
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Server access logs would add a second bucket and a write per request to a private bucket that only this stack\'s functions reach; every request already goes through a logged API route (request id, route, status).',
    });
  }

  /** Sets MEDIA_BUCKET and grants exactly the actions of `use`, on the media prefix only. */
  bind(fn: ApiFunction, use: MediaBucketUse): void {
    fn.addEnvironment('MEDIA_BUCKET', this.bucket.bucketName);
    fn.addToRolePolicy(new PolicyStatement({ effect: Effect.ALLOW, actions: ACTIONS[use], resources: [this.bucket.arnForObjects(`${MEDIA_PREFIX}*`)] }));
    if (use === 'read') {
      // Without ListBucket, S3 answers a missing key with 403 instead of 404 ("Media file not found on disk").
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['s3:ListBucket'],
          resources: [this.bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': [`${MEDIA_PREFIX}*`] } },
        }),
      );
    }
    Validations.of(fn.role!).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.bucket)}.Arn>/${MEDIA_PREFIX}*]`,
      reason: 'Media objects are keyed by chat and media id under uploads/ (contract §8.3); the wildcard covers that prefix of this one bucket only.',
    });
  }
}
