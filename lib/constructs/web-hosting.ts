/**
 * The web app's hosting (issue 26, "Hosting"): a static build (web/dist, or the folder of
 * `-c webDir=PATH`: lib/web-build.ts) in a private bucket, served by the distribution's default
 * behavior (edge.ts) through Origin Access Control. How it is served is declared in
 * lib/web-policy.ts, which `npm start` follows too:
 *
 * - SPA fallback: a CloudFront Function on viewer request rewrites a path whose last segment has
 *   no file extension to /index.html (FILE_NAME_PATTERN, isAppRoute). Paths under /api never reach
 *   this behavior.
 * - Response headers: one response-headers policy with the strict CSP, HSTS, X-Frame-Options DENY
 *   (and the CSP's frame-ancestors 'none'), nosniff and the referrer policy.
 * - Caching: each object carries its own Cache-Control, set by the deployment: a year and
 *   `immutable` for the content-hashed files under assets/, `no-cache` for everything else
 *   (index.html first). The behavior's managed CachingOptimized policy follows the object's header
 *   (at least 1 s, at most a year), so CloudFront and browsers keep the same rules.
 *
 * Why two BucketDeployments: Cache-Control is object metadata, and one deployment sets the same
 * metadata on every file it copies. Two deployments of the same asset (one upload), split by
 * include/exclude filters, cost one custom resource more and share the singleton copier (function,
 * role, policy, CLI layer); every other way costs more and is less exact: a second behavior for
 * /assets/* with its own response-headers policy overriding Cache-Control, plus a cache policy with
 * a year's minimum TTL (the origin would still say no-cache), is two resources and a behavior.
 * The assets deploy first, so a new index.html never names a file not yet there. Prune is on in
 * both (a file gone from the build leaves the bucket; a deployment prunes only what its filters
 * cover, so neither removes the other's files). No invalidation: index.html is `no-cache` (CloudFront
 * keeps it at most the policy's 1 s minimum) and every other new file has a new name.
 *
 * The relay's sign-in page (/relay-sign-in.html, .js, .css: lib/web-policy.ts) is served whatever
 * build is deployed: a build without them (`-c webDir`, another UI) gets the ones it lacks from
 * web/public as a second source of the pages deployment (its own small asset, filtered to those
 * files), so no resource is added and the no-cache rule holds for them too.
 *
 * The bucket is kept when the stack is deleted, like the media bucket (a deployment's files are
 * retained on delete, so an emptied bucket could not be assumed).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DefaultStackSynthesizer, Duration, Validations } from 'aws-cdk-lib';
import {
  AccessLevel,
  AllowedMethods,
  CachePolicy,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { BehaviorOptions } from 'aws-cdk-lib/aws-cloudfront';
import { S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { privateBucket } from './private-bucket.js';
import {
  APP_ENTRY,
  contentSecurityPolicy,
  FILE_NAME_PATTERN,
  HASHED_ASSETS_PREFIX,
  HASHED_CACHE_CONTROL,
  HSTS_MAX_AGE_SECONDS,
  REFERRER_POLICY,
  SIGN_IN_FILES,
  SIGN_IN_SOURCE_DIR,
  UNHASHED_CACHE_CONTROL,
} from '../web-policy.js';
import { logicalIdOf } from './api-function.js';
import { projectRoot } from './function-asset.js';

/** The sign-in files (lib/web-policy.ts SIGN_IN_FILES) a build folder does not hold. */
export const missingSignInFiles = (webDir: string): string[] =>
  SIGN_IN_FILES.filter((name) => !existsSync(join(webDir, name)));

/**
 * The SPA fallback's CloudFront Function (JavaScript runtime 2.0): isAppRoute's rule, built from
 * the same pattern. test/infra/web-hosting.test.ts runs this code on a table of paths.
 */
export const spaFallbackCode = [
  'function handler(event) {',
  '  var request = event.request;',
  "  var last = request.uri.split('/').pop();",
  `  if (!${FILE_NAME_PATTERN.toString()}.test(last)) request.uri = '${APP_ENTRY}';`,
  '  return request;',
  '}',
].join('\n');

/** Memory of the deployment's copier (deploy time only; the default is 1,024 MB). */
export const DEPLOYMENT_MEMORY_MB = 256;

/** The deployment filter of the hashed assets, e.g. "assets/*". */
export const HASHED_ASSETS_FILTER = `${HASHED_ASSETS_PREFIX.replace(/^\//, '')}*`;

function referrerPolicy(value: string): HeadersReferrerPolicy {
  const known = Object.values(HeadersReferrerPolicy) as string[];
  if (!known.includes(value)) throw new Error(`lib/web-policy.ts: no CloudFront referrer policy "${value}"`);
  return value as HeadersReferrerPolicy;
}

export interface WebHostingProps {
  /** The folder of the built app, index.html at its top (lib/web-build.ts resolveWebDir). */
  webDir: string;
  /** `webDir` is not our build: inline styles allowed (lib/web-policy.ts contentSecurityPolicy). */
  foreignBuild?: boolean | undefined;
  /** The media bucket's origin, which the CSP allows images and media from (MediaBucket.origin). */
  mediaOrigin: string;
}

export class WebHosting extends Construct {
  readonly bucket: Bucket;
  readonly spaFallback: CloudFrontFunction;
  readonly headers: ResponseHeadersPolicy;
  readonly deployments: { assets: BucketDeployment; pages: BucketDeployment };

  constructor(scope: Construct, id: string, props: WebHostingProps) {
    super(scope, id);
    this.bucket = privateBucket(this, 'Bucket', {
      whyNoAccessLogs:
        'Only CloudFront reads this bucket (Origin Access Control) and only the deployment writes it: its files are ' +
        'the public build of the web app; server access logs would add a bucket and a write per request.',
    });

    this.spaFallback = new CloudFrontFunction(this, 'SpaFallback', {
      comment: 'Web app routes (no file extension) get /index.html',
      code: FunctionCode.fromInline(spaFallbackCode),
      runtime: FunctionRuntime.JS_2_0,
    });

    this.headers = new ResponseHeadersPolicy(this, 'Headers', {
      comment: 'Web app: lib/web-policy.ts security headers',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: contentSecurityPolicy(props.mediaOrigin, {
            foreignBuild: props.foreignBuild === true,
          }),
          override: true,
        },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.seconds(HSTS_MAX_AGE_SECONDS),
          includeSubdomains: true,
          override: true,
        },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        contentTypeOptions: { override: true },
        referrerPolicy: { referrerPolicy: referrerPolicy(REFERRER_POLICY), override: true },
      },
    });

    const source = Source.asset(props.webDir);
    // The relay's sign-in page beside another build (lib/web-policy.ts SIGN_IN_FILES): the files
    // the build lacks, from web/public only, in the pages deployment (no-cache). Our build has
    // them (Vite copies web/public), so it gets no second source.
    const signIn = missingSignInFiles(props.webDir);
    const signInSource = signIn.length
      ? [Source.asset(join(projectRoot, SIGN_IN_SOURCE_DIR), { exclude: ['*', ...signIn.map((name) => `!${name}`)] })]
      : [];
    // outputObjectKeys off: the copier would answer CloudFormation with every key copied, and a
    // custom resource's answer is limited to 4 KB (a build of a few dozen files would fail the deploy).
    const common = {
      destinationBucket: this.bucket,
      prune: true,
      memoryLimit: DEPLOYMENT_MEMORY_MB,
      outputObjectKeys: false,
    };
    const assets = new BucketDeployment(this, 'DeployAssets', {
      ...common,
      sources: [source],
      exclude: ['*'],
      include: [HASHED_ASSETS_FILTER],
      cacheControl: [CacheControl.fromString(HASHED_CACHE_CONTROL)],
    });
    const pages = new BucketDeployment(this, 'DeployPages', {
      ...common,
      sources: [source, ...signInSource],
      exclude: [HASHED_ASSETS_FILTER],
      cacheControl: [CacheControl.fromString(UNHASHED_CACHE_CONTROL)],
    });
    pages.node.addDependency(assets);
    // Each BucketDeployment makes an AWS CLI layer for the copier, but the copier is one function
    // for the stack (a singleton) made with the first deployment's layer: the second layer would be
    // an unused resource (and its upload).
    pages.node.tryRemoveChild('AwsCliLayer');
    this.deployments = { assets, pages };
    // The copier: CDK's own function, run by CloudFormation at deploy time only.
    const copier = assets.handlerRole.node.scope!;
    // The assets bucket's name holds the bootstrap qualifier (cdk.json may set another).
    const qualifier: unknown = this.node.tryGetContext('@aws-cdk/core:bootstrapQualifier');
    Validations.of(copier).acknowledge(
      {
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason: "The CDK deployment copier's own function (deploy time only) comes with the basic execution role.",
      },
      ...[
        'Action::s3:GetObject*',
        'Action::s3:GetBucket*',
        'Action::s3:List*',
        'Action::s3:DeleteObject*',
        'Action::s3:Abort*',
        `Resource::arn:<AWS::Partition>:s3:::cdk-${String(qualifier ?? DefaultStackSynthesizer.DEFAULT_QUALIFIER)}-assets-<AWS::AccountId>-<AWS::Region>/*`,
        `Resource::<${logicalIdOf(this.bucket)}.Arn>/*`,
      ].map((finding) => ({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason:
          "CDK's deployment copier reads the deploy's asset in the CDK assets bucket and syncs every object of the " +
          'web bucket (puts and prunes under any key of the build); its wildcards cover those two buckets only.',
      })),
      {
        id: 'AwsSolutions-L1',
        reason: "CDK's bucket deployment picks its own function's runtime (deploy time only).",
      },
    );
  }

  /** The distribution's default behavior: the bucket, read-only, with the fallback and the headers. */
  defaultBehavior(): BehaviorOptions {
    return {
      // LIST as well as READ: a missing file is 404, not S3's 403 (the bucket's root is never asked
      // for: "/" is an app route, rewritten to /index.html).
      origin: S3BucketOrigin.withOriginAccessControl(this.bucket, {
        originAccessLevels: [AccessLevel.READ, AccessLevel.LIST],
      }),
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      compress: true,
      responseHeadersPolicy: this.headers,
      functionAssociations: [{ function: this.spaFallback, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
  }
}
