/**
 * The media bucket (contract §2.4, §8; ARCHITECTURE.md "Media"): originals and thumbnails
 * under `uploads/`, private (public access blocked, TLS only, S3-managed encryption), kept on
 * stack deletion like the table. Only the media routes get it, each with the actions it uses
 * on its prefixes: downloads read, uploads put (and delete what a failed upload stored),
 * deletion deletes, upload sessions sign puts under pending/, finalize moves them to uploads/.
 */
import { Duration, Validations } from 'aws-cdk-lib';
import {
  AllowedMethods,
  CachePolicy,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { BehaviorOptions } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { ABORT_INCOMPLETE_UPLOADS, privateBucket } from './private-bucket.js';
import { MEDIA_UPLOAD_PATH } from '../web-policy.js';
import type { ApiFunction } from './api-function.js';
import { arnInFinding } from './api-function.js';

/** What a route does with the bucket (lib/routes.ts `mediaBucket`). */
export type MediaBucketUse = 'read' | 'write' | 'delete' | 'presign' | 'finalize';

/** Every stored object lives under this prefix (§8.3 storage paths). */
export const MEDIA_PREFIX = 'uploads/';
/** Upload sessions' files wait here until finalized; the lifecycle expires the rest. */
export const PENDING_PREFIX = 'pending/';

/** Object actions by prefix, and the prefixes it may list (so a missing key is 404, not 403). */
const GRANTS: Record<MediaBucketUse, { objects: [string, string[]][]; list: string[] }> = {
  read: { objects: [[MEDIA_PREFIX, ['s3:GetObject']]], list: [MEDIA_PREFIX] },
  write: { objects: [[MEDIA_PREFIX, ['s3:PutObject', 's3:DeleteObject']]], list: [] },
  delete: { objects: [[MEDIA_PREFIX, ['s3:DeleteObject']]], list: [] },
  // A presigned POST is signed with the function's credentials: it needs PutObject itself.
  presign: { objects: [[PENDING_PREFIX, ['s3:PutObject']]], list: [] },
  // Verify the pending file, copy it to its storage path (GetObject there, PutObject here), delete it.
  finalize: {
    objects: [
      [PENDING_PREFIX, ['s3:GetObject', 's3:DeleteObject']],
      [MEDIA_PREFIX, ['s3:PutObject', 's3:DeleteObject']],
    ],
    list: [PENDING_PREFIX],
  },
};

/**
 * The upload path's CloudFront Function (viewer request): POST only, sent to the bucket's root, where
 * S3 takes form uploads (POST Object); anything else is answered 405 here and never reaches the bucket.
 */
export const mediaUploadCode = [
  'function handler(event) {',
  '  var request = event.request;',
  "  if (request.method !== 'POST') return { statusCode: 405, statusDescription: 'Method Not Allowed' };",
  "  request.uri = '/';",
  '  return request;',
  '}',
].join('\n');

export class MediaBucket extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = privateBucket(this, 'Bucket', {
      lifecycleRules: [
        ABORT_INCOMPLETE_UPLOADS,
        // Files of upload sessions never finalized (the session record expires after a day too).
        { id: 'ExpireUnfinalizedUploads', prefix: PENDING_PREFIX, expiration: Duration.days(1) },
      ],
      whyNoAccessLogs:
        'Server access logs would add a second bucket and a write per request to a private bucket that only this ' +
        "stack's functions reach; every request already goes through a logged API route (request id, route, status).",
    });
  }

  /**
   * The origin of the bucket's presigned URLs (the functions' S3 client addresses it by its
   * regional, virtual-hosted name): where a download over the inline limit is redirected, so the
   * web app's CSP lets images and media load from it (lib/web-policy.ts contentSecurityPolicy).
   */
  get origin(): string {
    return `https://${this.bucket.bucketRegionalDomainName}`;
  }

  /**
   * The distribution's behavior for MEDIA_UPLOAD_PATH (lib/web-policy.ts): upload sessions' form
   * POSTs from the web app, on its own origin (its CSP allows connections there only), passed to
   * the bucket untouched. No origin access control: the form's policy, signed by the session
   * route's role, is the request's authorization, and S3 checks it as on its own endpoint (key,
   * type, exact size, expiry); without one the private bucket refuses. Nothing is cached.
   */
  uploadBehavior(): BehaviorOptions {
    const fn = new CloudFrontFunction(this, 'UploadPath', {
      comment: `${MEDIA_UPLOAD_PATH}: form uploads (POST) to the media bucket's root`,
      code: FunctionCode.fromInline(mediaUploadCode),
      runtime: FunctionRuntime.JS_2_0,
    });
    return {
      origin: S3BucketOrigin.withBucketDefaults(this.bucket),
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      // Forwards the form's Content-Type (its boundary) and length as the API behaviors do.
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      compress: false,
      functionAssociations: [{ function: fn, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
  }

  /** Sets MEDIA_BUCKET and grants exactly the actions of `use`, on its prefixes only. */
  bind(fn: ApiFunction, use: MediaBucketUse): void {
    fn.addEnvironment('MEDIA_BUCKET', this.bucket.bucketName);
    // Sessions opened by the web app post to its origin (core/media-upload.ts; uploadBehavior).
    if (use === 'presign') fn.addEnvironment('MEDIA_UPLOAD_PATH', MEDIA_UPLOAD_PATH);
    const grants = GRANTS[use];
    for (const [prefix, actions] of grants.objects) {
      fn.addToRolePolicy(
        new PolicyStatement({ effect: Effect.ALLOW, actions, resources: [this.bucket.arnForObjects(`${prefix}*`)] }),
      );
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::${arnInFinding(fn, this.bucket)}/${prefix}*]`,
        reason:
          'Media objects are keyed by chat and media (or upload) id under this prefix (contract §8.3); the wildcard ' +
          'covers that prefix of this one bucket only.',
      });
    }
    if (grants.list.length > 0) {
      fn.addToRolePolicy(
        new PolicyStatement({
          effect: Effect.ALLOW,
          actions: ['s3:ListBucket'],
          resources: [this.bucket.bucketArn],
          conditions: { StringLike: { 's3:prefix': grants.list.map((p) => `${p}*`) } },
        }),
      );
    }
  }
}
