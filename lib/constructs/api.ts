/**
 * The HTTP API: one function and one API Gateway route per entry of lib/routes.ts (but the
 * streaming one, the event stream: event-stream.ts), the functions in one nested stack per area of
 * the API (api-area.ts), plus the
 * catch-all `$default` route (CORS preflight for every path and the 404 envelope). API
 * Gateway's own CORS stays off on purpose: it would answer preflight itself, while the
 * functions answer it from the live configuration (server.corsOrigins).
 */
import { Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, LogGroupClass, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { API_AREAS, apiAreaOf, apiRoutes, fallbackHandler } from '../routes.js';
import type { ApiArea } from '../routes.js';
import { ApiAreaStack, areaStackId, routeFunction } from './api-area.js';

// Where the stack, the event stream and the tests have always found it.
export { tableAccessOf } from './api-area.js';
import type { ApiFunction } from './api-function.js';
import type { SearchIndex } from './search-index.js';
import type { WebPush } from './web-push.js';
import type { MediaBucket } from './media-bucket.js';
import type { FunctionWiring } from './api-function.js';
import type { DispatchQueues } from './dispatch-queues.js';
import type { StoredSecrets } from './stored-secrets.js';
import type { StreamTimeouts } from './stream-timeouts.js';
import type { ApiThrottle } from '../deployment-inputs.js';

export interface ApiProps extends FunctionWiring {
  /**
   * The stream timers: the functions of `streamTimer` routes get FLUSH_QUEUE_URL and may send
   * the delayed stream checks there (the flush queue carries them, stream-timeouts.ts).
   */
  streamTimeouts: StreamTimeouts;
  /**
   * The dispatch queues: the functions of `dispatch` and `dispatchInputs` routes (and only
   * those) get their URLs and the queue actions they use (dispatch-queues.ts).
   */
  dispatchQueues: DispatchQueues;
  /** The media bucket: the functions of `mediaBucket` routes (and only those) get it (media-bucket.ts). */
  mediaBucket: MediaBucket;
  /** Web push when enabled: the functions of `pushSender` routes (and only those) may read its keys (web-push.ts). */
  webPush?: WebPush | undefined;
  /** The search index: the functions of `searchIndex` routes read its segments (search-index.ts). */
  searchIndex: SearchIndex;
  /**
   * The stack's stored secrets (stored-secrets.ts): the write routes read the origin-verify value
   * CloudFront adds to every origin request, to believe CloudFront's report of the viewer's address
   * for the rate limit (and only they); every route that checks auth reads the instance secret when on.
   */
  secrets: StoredSecrets;
  /** The stage's throttle (requests per second, steady and burst) for all routes together. */
  throttle: ApiThrottle;
}

/**
 * One JSON line per request. Deliberately no query string: SSE and file URLs may carry the
 * instance secret as `?token=` (contract §1.11), which must never reach a log.
 *
 * Every request writes one, chunk appends included (3 million a month in the typical workload),
 * so the line is kept to what tells requests apart and explains a failure (250–370 bytes): the time
 * is the log event's own, the method is in the route key, the protocol and the integration's
 * latency (the function logs its own) are left out. The log group is of the Infrequent Access
 * class: half the ingestion price, still searchable with Logs Insights (it carries no metric
 * filter or subscription, which that class does not support). test/bench/cost prices it.
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  routeKey: '$context.routeKey',
  path: '$context.path',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latencyMs: '$context.responseLatency',
  integrationError: '$context.integrationErrorMessage',
} as const;
const accessLogFormat = AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));

export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  /** The function of every route, by route key (`GET /api/v1/chats`), plus `$default`. */
  readonly functions = new Map<string, ApiFunction>();
  /** The nested stack of each area (api-area.ts), by area. */
  readonly areas = new Map<ApiArea, ApiAreaStack>();

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);

    // The fallback answers OPTIONS and 404s only: it reads the live configuration (CORS, §1.13: an
    // allow-list changed by PATCH /config/admin must reach preflights) and nothing else. It stays in the
    // root stack with the API's $default route.
    const fallback = routeFunction(this, 'Fallback', fallbackHandler, 'config', props);
    this.functions.set('$default', fallback);

    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: Stack.of(this).stackName,
      description: 'Chat relay HTTP API (OpenGram API v1)',
      defaultIntegration: new HttpLambdaIntegration('FallbackIntegration', fallback),
      createDefaultStage: false,
    });

    // Every other route's function in its area's nested stack (api-area.ts says why), its route here.
    for (const area of API_AREAS) {
      const routes = apiRoutes.filter((route) => apiAreaOf(route) === area);
      if (routes.length === 0) continue;
      const stack = new ApiAreaStack(this, areaStackId(area), { area, routes, httpApi: this.httpApi, wiring: props });
      this.areas.set(area, stack);
      for (const [key, fn] of stack.functions) this.functions.set(key, fn);
    }

    const accessLogs = new LogGroup(this, 'AccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      logGroupClass: LogGroupClass.INFREQUENT_ACCESS,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: accessLogFormat },
      // Requests above it get API Gateway's 429 before any function runs (the cost cap).
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
    });

    // (AwsSolutions-COG4, Cognito authorizers, only inspects REST API methods, so it has no
    // finding here to acknowledge.)
    Validations.of(this.httpApi).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        "Authorization is the contract's instance secret (§1.11) as a bearer token, checked in every function by " +
        'the auth middleware with per-route classes (public / read / write) and a live on/off switch, deployed on ' +
        'and required by reads unless -c allowOpenAccess=true; there are no Cognito or IAM principals to authorize ' +
        'at API Gateway.',
    });
  }

  /** The invoke URL of the `$default` stage. */
  get url(): string {
    return this.stage.url;
  }
}
