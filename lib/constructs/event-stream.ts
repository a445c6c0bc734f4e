/**
 * The event stream (contract §5.9, §6.4): the route table's `streaming` entry (lib/routes.ts
 * streamRoute, functions/http/events/stream.ts) behind a Lambda function URL in response-streaming
 * mode. It is not an API Gateway route: the HTTP API buffers whole responses and ends
 * integrations after 30 seconds.
 *
 * OpenGram clients take one base URL for the API and the stream: the CloudFront distribution
 * of edge.ts sends the entry's path to this function URL, the rest of /api/* to the HTTP API
 * and every other path to the web app (output BaseUrl).
 */
import { Duration } from 'aws-cdk-lib';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { Keys } from '../../functions/store/keys.js';
import { authClassOf, functionTimeoutSeconds } from '../routes.js';
import type { RouteSpec } from '../routes.js';
import { tableAccessOf } from './api.js';
import { ApiFunction, httpEntry } from './api-function.js';
import type { FunctionWiring } from './api-function.js';
import type { StoredSecrets } from './stored-secrets.js';

export interface EventStreamProps extends FunctionWiring {
  /**
   * The stream's route entry (lib/routes.ts streamRoute): its handler, table access, auth class,
   * timeout (beyond the stream's lifetime), memory (it mostly waits between polls, and each open
   * connection holds an instance for all of that time) and reserved concurrency (the most open
   * streams at once).
   */
  route: RouteSpec;
  /**
   * The stack's stored secrets: the origin-verify value CloudFront adds to its origin requests (the
   * handler answers a 404 to any request without it, before anything else,
   * functions/middleware/origin-verify.ts, so the function URL, public by necessity — auth type NONE,
   * see below — serves viewers of the distribution only), and the instance secret when on.
   */
  secrets: StoredSecrets;
}

export class EventStream extends Construct {
  readonly function: ApiFunction;
  readonly functionUrl: FunctionUrl;

  constructor(scope: Construct, id: string, props: EventStreamProps) {
    super(scope, id);

    const { route } = props;
    if (!route.streaming) throw new Error(`EventStream: ${route.method} ${route.path} is no streaming route.`);
    // Reads the event log, the sequence counter and settings, like the read routes.
    this.function = ApiFunction.wired(this, 'Events', props, tableAccessOf(route), {
      entry: httpEntry(route.handler),
      timeout: Duration.seconds(functionTimeoutSeconds(route)),
      ...(route.memoryMb ? { memorySize: route.memoryMb } : {}),
      ...(route.reservedConcurrency ? { reservedConcurrency: route.reservedConcurrency } : {}),
      description: `${route.method} ${route.path} (SSE over a response-streaming function URL)`,
    });
    // And one write: a reader that has waited out a hole in the sequence voids that number, so no
    // later reader waits for it again (core/event-stream.ts, store/events-repo.ts voidNumber). Only
    // PutItem, only in the event partitions, only an item with a void's attributes, returning nothing
    // (IAM cannot require the put's attribute_not_exists condition; the code always sets it).
    this.function.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        actions: ['dynamodb:PutItem'],
        resources: [props.table.tableArn],
        conditions: {
          'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [Keys.eventsPattern] },
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...Keys.voidAttributes] },
          StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
        },
      }),
    );
    props.secrets.bind(this.function, 'ORIGIN_VERIFY');
    if (props.instanceSecret && authClassOf(route) !== 'public') {
      props.secrets.bind(this.function, 'INSTANCE');
      // EventSource sends the same-origin session cookie (§1.11.1).
      this.function.bindSessionKey(props.table, 'check');
    }

    // No `cors` on the URL, on purpose. With it, Lambda answers preflight itself and sets the
    // CORS headers from a list fixed at deploy time. The handler already answers OPTIONS and
    // sets Access-Control-Allow-Origin from the live configuration (server.corsOrigins and
    // its OPENGRAM_CORS_ORIGINS override, read per request) with the contract's rules (§1.13:
    // nothing without Origin, any Origin echoed while the list is empty, exact matches
    // otherwise); two sources for the header would send it twice, which browsers reject.
    // Same choice as the HTTP API (api.ts).
    // Auth type NONE: the handler checks the contract's instance secret itself (§1.11, as a
    // bearer header or `?token=`, required whenever the secret is on); AWS_IAM would need
    // SigV4-signed requests, which browsers and OpenGram clients do not make, and CloudFront's
    // origin access control signs in the Authorization header the clients' secret travels in
    // (origin-verify.ts). Reached directly, the URL answers 404 before anything runs. CDK adds the
    // public lambda:InvokeFunctionUrl permission (auth type NONE) and lambda:InvokeFunction
    // limited to calls through the URL. (The AwsSolutions pack has no rule on function URL
    // auth, so there is no finding to acknowledge.)
    this.functionUrl = this.function.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      invokeMode: InvokeMode.RESPONSE_STREAM,
    });
  }

  /** The function URL, ending in "/"; the handler serves the stream at any path under it. */
  get url(): string {
    return this.functionUrl.url;
  }
}
