/**
 * The one way this stack makes a bucket: private (no public access, objects owned by the
 * bucket), TLS only, S3-managed encryption, kept when the stack is deleted. Each caller adds its
 * lifecycle rules and says why it keeps no server access logs (cdk-nag AwsSolutions-S1).
 */
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import type { LifecycleRule } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';

/** Multipart uploads an SDK started and never completed cost storage until aborted. */
export const ABORT_INCOMPLETE_UPLOADS: LifecycleRule = {
  id: 'AbortIncompleteUploads',
  abortIncompleteMultipartUploadAfter: Duration.days(1),
};

export interface PrivateBucketProps {
  lifecycleRules?: LifecycleRule[];
  /** Why the bucket has no server access logs (the AwsSolutions-S1 acknowledgement). */
  whyNoAccessLogs: string;
}

export function privateBucket(scope: Construct, id: string, props: PrivateBucketProps): Bucket {
  const bucket = new Bucket(scope, id, {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    encryption: BucketEncryption.S3_MANAGED,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    ...(props.lifecycleRules ? { lifecycleRules: props.lifecycleRules } : {}),
  });
  Validations.of(bucket).acknowledge({ id: 'AwsSolutions-S1', reason: props.whyNoAccessLogs });
  return bucket;
}
