/**
 * One base URL for the whole service. OpenGram clients (its web UI, its agent plugin) take a
 * single base URL and reach both the REST API and `GET /api/v1/events/stream` under it, while
 * the stack serves the REST API from API Gateway and the stream from a response-streaming
 * function URL (API Gateway cannot stream). A CloudFront distribution joins them: the stream
 * path goes to the function URL, everything else to the HTTP API.
 *
 * Both behaviors pass requests through untouched: caching disabled, every viewer header,
 * cookie and query string forwarded except Host (each origin needs its own); with caching
 * disabled that includes `Authorization`, which carries the instance secret. The managed
 * AllViewerExceptHostHeader policy also forwards CloudFront's own headers, among them
 * CloudFront-Viewer-Address (the viewer's address and port), which the write rate limit keys
 * on (functions/middleware/rate-limit.ts). CloudFront adds the origin-verify secret
 * (origin-verify.ts) to every origin request. Compression is
 * off, as the stream requires (§13 item 4). Origin read timeouts: 45 s for the API (claims
 * long-poll up to 25 s and API Gateway gives up at about 30 s, so the gateway answers first)
 * and 30 s for the stream (it writes a keep-alive comment every 15 s).
 *
 * With a custom domain (`-c domainName=… -c certificateArn=…`, an ACM certificate in
 * us-east-1) viewers get TLS 1.2+; on the default *.cloudfront.net name CloudFront fixes the
 * security policy itself.
 */
import { Duration, Fn, Validations } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
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
  /** The web app's path for upload sessions' form POSTs (MEDIA_UPLOAD_PATH) and its behavior (media-bucket.ts). */
  mediaUpload?: { path: string; behavior: BehaviorOptions } | undefined;
}

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
    this.distribution = new Distribution(this, 'Distribution', {
      comment: 'Chat relay: the API and its event stream under one base URL',
      defaultBehavior: {
        origin: new HttpOrigin(apiDomain, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          readTimeout: Duration.seconds(45),
          customHeaders: props.originHeaders,
        }),
        allowedMethods: AllowedMethods.ALLOW_ALL,
        ...passThrough,
      },
      additionalBehaviors: {
        [`${props.streamPath}*`]: {
          origin: new FunctionUrlOrigin(props.streamUrl, {
            readTimeout: Duration.seconds(30),
            customHeaders: props.originHeaders,
          }),
          allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
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

    const acknowledgements = [
      {
        id: 'AwsSolutions-CFR1',
        reason: 'Agents and their user connect from anywhere; the instance secret, not geography, decides access.',
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
          'origin; a CloudFront log bucket would duplicate them.',
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
