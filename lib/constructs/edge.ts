/**
 * One base URL for the whole service. OpenGram clients (its web UI, its agent plugin) take a
 * single base URL and reach both the REST API and `GET /api/v1/events/stream` under it, while
 * the stack serves the REST API from API Gateway and the stream from a response-streaming
 * function URL (API Gateway cannot stream), and the web app from a private bucket. A CloudFront
 * distribution joins them, its behaviors matched in this order: the stream path goes to the
 * function URL, `/api/*` to the HTTP API, everything else (the default behavior) to the web app
 * (web-hosting.ts: the bucket through Origin Access Control, the SPA fallback, the security
 * headers). Every route of the API lives under /api, its catch-all ($default: CORS preflight and
 * the 404 envelope) included; a path outside /api is the app's.
 *
 * The two API behaviors pass requests through untouched: caching disabled, every viewer header,
 * cookie and query string forwarded except Host (each origin needs its own); with caching
 * disabled that includes `Authorization`, which carries the instance secret. The managed
 * AllViewerExceptHostHeader policy also forwards CloudFront's own headers, among them
 * CloudFront-Viewer-Address (the viewer's address and port), which the write rate limit keys
 * on (functions/middleware/rate-limit.ts). CloudFront adds the origin-verify secret
 * (origin-verify.ts) to every request to either API origin. Compression is off, as the stream
 * requires (§13 item 4); the API's functions compress their JSON answers themselves
 * (functions/middleware/compression.ts) by the viewer's Accept-Encoding, which the origin request
 * policy forwards, and CloudFront passes the encoded body through. Origin read timeouts: 45 s for
 * the API (claims long-poll up to 25 s and API Gateway gives up at about 30 s, so the gateway
 * answers first) and 30 s for the stream (it writes a keep-alive comment every 15 s). They carry no
 * response-headers policy: the functions set their own headers (a media download its own sandbox
 * CSP and nosniff, which an overriding policy would replace), and the app's HSTS
 * (includeSubDomains) already holds for the whole host.
 *
 * The viewer's host. A write authenticated by the session cookie must come from the service's own
 * origin (functions/middleware/auth.ts fromOwnOrigin), but the API sees API Gateway's host name, and
 * the distribution's own name cannot reach the functions by configuration: the distribution
 * depends on the API, so the API's functions cannot depend on it (and with no custom domain the
 * name is known only once CloudFront made it). So a CloudFront Function on `/api/*` (viewer
 * request) copies the Host the browser used into `x-relay-viewer-host`, replacing any value a
 * client sent; the origin request policy forwards it with the other viewer headers. The API
 * believes it only on a request that carries the origin-verify secret (anyone can send it to API
 * Gateway's own endpoint, but there the browser would send no cookie for this host anyway), so
 * a deployed stack needs no `server.publicBaseUrl` for cookie writes, with or without a custom
 * domain. The stream behavior needs none: it serves GET only.
 *
 * With a custom domain (`-c domainName=… -c certificateArn=…`, an ACM certificate in
 * us-east-1) viewers get TLS 1.2+; on the default *.cloudfront.net name CloudFront fixes the
 * security policy itself.
 */
import { Annotations, Duration, Fn, Validations } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  Function as CloudFrontFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import type { BehaviorOptions } from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin, HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { IFunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { VIEWER_HOST_HEADER } from '../../functions/middleware/origin-verify.js';
import { APP_ENTRY } from '../web-policy.js';

export interface EdgeDomain {
  /** The public host name, e.g. relay.example.com (its DNS record points at the distribution). */
  name: string;
  /** ARN of an ACM certificate for that name, in us-east-1 (CloudFront's region). */
  certificateArn: string;
}

export interface EdgeProps {
  /** The HTTP API's endpoint, https://<id>.execute-api.<region>.amazonaws.com */
  apiEndpoint: string;
  /** The event stream's function URL. */
  streamUrl: IFunctionUrl;
  /** The stream's path (lib/routes.ts streamRoute.path). */
  streamPath: string;
  domain?: EdgeDomain | undefined;
  /**
   * Custom headers CloudFront adds to every request it sends to either origin: the origin-verify
   * secret (origin-verify.ts), which the stream function requires and the rate limit checks.
   */
  originHeaders: Record<string, string>;
  /** The default behavior: the web app (web-hosting.ts WebHosting.defaultBehavior). */
  web: BehaviorOptions;
  /** The web app's path for upload sessions' form POSTs (MEDIA_UPLOAD_PATH) and its behavior (media-bucket.ts). */
  mediaUpload?: { path: string; behavior: BehaviorOptions } | undefined;
}

/** The API behavior's CloudFront Function: the Host the viewer used, as a header the API believes. */
export const viewerHostCode = [
  'function handler(event) {',
  '  var request = event.request;',
  `  if (request.headers.host) request.headers['${VIEWER_HOST_HEADER}'] = { value: request.headers.host.value };`,
  `  else delete request.headers['${VIEWER_HOST_HEADER}'];`,
  '  return request;',
  '}',
].join('\n');

/** The HTTP API's behavior: every route of lib/routes.ts is under /api (the stream's path apart). */
export const API_PATH_PATTERN = '/api/*';

export class Edge extends Construct {
  readonly distribution: Distribution;
  private readonly domainName: string | undefined;

  constructor(scope: Construct, id: string, props: EdgeProps) {
    super(scope, id);
    this.domainName = props.domain?.name;
    const passThrough: Omit<BehaviorOptions, 'origin'> = {
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      compress: false,
    };
    const apiDomain = Fn.select(2, Fn.split('/', props.apiEndpoint));
    const viewerHost = new CloudFrontFunction(this, 'ViewerHost', {
      comment: `API requests: the viewer's Host as ${VIEWER_HOST_HEADER}`,
      code: FunctionCode.fromInline(viewerHostCode),
      runtime: FunctionRuntime.JS_2_0,
    });
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Chat relay: the web app, the API and its event stream under one base URL',
      defaultBehavior: props.web,
      // The fallback function answers "/" with the app already; this keeps the bucket's root (a
      // listing, with the LIST access the origin has) out of reach even without it.
      defaultRootObject: APP_ENTRY.slice(1),
      // In this order: CloudFront takes the first pattern that matches, the stream's before /api/*.
      additionalBehaviors: {
        [`${props.streamPath}*`]: {
          origin: new FunctionUrlOrigin(props.streamUrl, {
            readTimeout: Duration.seconds(30),
            customHeaders: props.originHeaders,
          }),
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
          ...passThrough,
        },
        [API_PATH_PATTERN]: {
          origin: new HttpOrigin(apiDomain, {
            protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
            readTimeout: Duration.seconds(45),
            customHeaders: props.originHeaders,
          }),
          allowedMethods: AllowedMethods.ALLOW_ALL,
          functionAssociations: [{ function: viewerHost, eventType: FunctionEventType.VIEWER_REQUEST }],
          ...passThrough,
        },
        ...(props.mediaUpload ? { [props.mediaUpload.path]: props.mediaUpload.behavior } : {}),
      },
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: PriceClass.PRICE_CLASS_100,
      ...(props.domain
        ? {
            domainNames: [props.domain.name],
            certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
            minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
    });

    // Said of every origin with LIST access. Here "/" never reaches the bucket as a listing: the
    // fallback function rewrites it to /index.html, which is also the default root object.
    Annotations.of(this.distribution).acknowledgeWarning(
      '@aws-cdk/aws-cloudfront-origins:listBucketSecurityRisk',
      'The default root object is set, and "/" is an app route rewritten to /index.html',
    );

    const acknowledgements = [
      {
        id: 'AwsSolutions-CFR1',
        reason:
          'Agents and their user connect from anywhere; the instance secret, not geography, decides access (the ' +
          'web app itself is a public static build).',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'No WAF by default: every request is authenticated by the instance secret, writes are rate-limited per ' +
          "viewer in the functions and API Gateway's stage throttle caps all requests together; a web ACL adds a " +
          'fixed monthly cost an operator can attach when wanted.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          "API Gateway's access logs and the stream function's logs already record every request that reaches an " +
          "API origin; a CloudFront log bucket would duplicate them, and the web app's files are public.",
      },
    ];
    if (props.mediaUpload) {
      acknowledgements.push({
        id: 'AwsSolutions-CFR7',
        reason:
          "The upload path's S3 origin takes form POSTs only (its function answers anything else 405), each " +
          'authorized by the POST policy a session route signed for one key, type and size; origin access control ' +
          'would re-sign them with CloudFront and make that policy moot.',
      });
    }
    if (!props.domain) {
      acknowledgements.push({
        id: 'AwsSolutions-CFR4',
        reason:
          'On the default *.cloudfront.net name CloudFront sets the viewer security policy itself; deploy with -c ' +
          'domainName and -c certificateArn for TLS 1.2 and up.',
      });
    }
    Validations.of(this.distribution).acknowledge(...acknowledgements);
  }

  /** The base URL clients use, ending in "/". */
  get url(): string {
    return `https://${this.domainName ?? this.distribution.distributionDomainName}/`;
  }
}
