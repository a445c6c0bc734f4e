/**
 * One area of the HTTP API (lib/routes.ts apiAreaOf: chats, messages, requests, media, dispatch,
 * admin) in a CloudFormation nested stack of its own: each route's function, its role and policy,
 * its log group, API Gateway's invoke permission and the integration. The route itself stays in
 * the root template, under the HTTP API, with the logical id it always had (routeInRoot).
 *
 * Why nested stacks (docs/deployment.md, "One stack, several templates"): CloudFormation refuses a template above 500
 * resources, and every endpoint costs seven; one template held 472 of them. An area's stack holds
 * six per route, the root one per route. Plain `NestedStack`s: CDK passes what an area uses from
 * the root (the table, queues, buckets, state machine, the API's id, the VAPID key) as the nested
 * stack's parameters (`referenceto<Producer path><Attr>`), and the integration ids back as
 * outputs, so `cdk deploy ChatRelay` stays one command.
 */
import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { CfnRoute, HttpIntegration, HttpIntegrationType, PayloadFormatVersion } from 'aws-cdk-lib/aws-apigatewayv2';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { IMAGE_MEMORY_MB, authClassOf, routeId } from '../routes.js';
import type { ApiArea as AreaName, RouteSpec } from '../routes.js';
import { ApiFunction, httpEntry } from './api-function.js';
import type { TableAccess } from './api-function.js';
import type { ApiProps } from './api.js';

/** Which table grant a route's function gets (api-function.ts TableAccess), from its route entry. */
export function tableAccessOf(route: RouteSpec): TableAccess {
  if (route.table === 'config' || route.table === 'none') return route.table;
  if (route.writes) return 'readWrite';
  return route.cursors ? 'readCursors' : 'read';
}

/** The function of a route (or of the catch-all), in `scope`, with the stack's wiring and the route's settings. */
export function routeFunction(
  scope: Construct,
  fnId: string,
  handler: string,
  access: TableAccess,
  props: ApiProps,
  route: Partial<
    Pick<RouteSpec, 'timeoutSeconds' | 'images' | 'apiDocument' | 'memoryMb' | 'reservedConcurrency'>
  > = {},
): ApiFunction {
  return ApiFunction.wired(scope, fnId, props, access, {
    entry: httpEntry(handler),
    timeout: route.timeoutSeconds === undefined ? undefined : Duration.seconds(route.timeoutSeconds),
    ...(route.memoryMb ? { memorySize: route.memoryMb } : {}),
    ...(route.images ? { images: true, memorySize: IMAGE_MEMORY_MB } : {}),
    ...(route.apiDocument ? { apiDocument: route.apiDocument } : {}),
    ...(route.reservedConcurrency ? { reservedConcurrency: route.reservedConcurrency } : {}),
  });
}

/** The nested stack's construct id of an area: `Chats`, `Admin`, … (ChatRelay/Api/Chats). */
export const areaStackId = (area: AreaName): string => area[0]!.toUpperCase() + area.slice(1);

export interface ApiAreaProps {
  area: AreaName;
  /** The area's routes (lib/routes.ts apiAreaOf). */
  routes: readonly RouteSpec[];
  /** The HTTP API, in the root stack: its routes are made there (routeInRoot). */
  httpApi: HttpApi;
  /** What the area's functions are bound to (api.ts). */
  wiring: ApiProps;
}

export class ApiAreaStack extends NestedStack {
  /** The function of every route of the area, by route key (`GET /api/v1/chats`). */
  readonly functions = new Map<string, ApiFunction>();

  constructor(scope: Construct, id: string, props: ApiAreaProps) {
    super(scope, id, { description: `Chat relay: the ${props.area} routes' functions (lib/routes.ts apiAreaOf)` });
    const { wiring, httpApi } = props;
    for (const route of props.routes) {
      const id = routeId(route);
      const fn = routeFunction(this, id, route.handler, tableAccessOf(route), wiring, route);
      if (route.writes) wiring.secrets.bind(fn, 'ORIGIN_VERIFY');
      // Public routes never check the secret (they resolve the configuration without it), but the sign-in
      // compares it; every route that checks it also accepts a session cookie (§1.11.1).
      const checksAuth = authClassOf(route) !== 'public';
      if (wiring.instanceSecret && (checksAuth || route.signsSessions)) {
        wiring.secrets.bind(fn, 'INSTANCE');
        fn.bindSessionKey(wiring.table, route.signsSessions ? 'sign' : 'check');
      }
      if (route.streamTimer || route.requestTimer) wiring.streamTimeouts.bindStarter(fn);
      if (route.dispatch) wiring.dispatchQueues.bindWorkerApi(fn);
      if (route.dispatchInputs) wiring.dispatchQueues.bindInputWriter(fn);
      if (route.mediaBucket) wiring.mediaBucket.bind(fn, route.mediaBucket);
      if (route.pushSender) wiring.webPush?.bindSender(fn);
      if (route.searchIndex) wiring.searchIndex.bindReader(fn);

      // What HttpLambdaIntegration would make beside the route, made here instead (beside the function).
      const integration = new HttpIntegration(this, `${id}Integration`, {
        httpApi,
        integrationType: HttpIntegrationType.AWS_PROXY,
        integrationUri: fn.functionArn,
        payloadFormatVersion: PayloadFormatVersion.VERSION_2_0,
      });
      fn.addPermission(`${id}Permission`, {
        scope: this,
        principal: new ServicePrincipal('apigateway.amazonaws.com'),
        // Any stage, this route's method and path only (as HttpLambdaIntegration scopes it).
        sourceArn: Stack.of(this).formatArn({
          service: 'execute-api',
          resource: httpApi.apiId,
          resourceName: `*/*${route.path}`,
        }),
      });
      routeInRoot(httpApi, route, integration.integrationId);
      this.functions.set(`${route.method} ${route.path}`, fn);
    }
  }
}

/**
 * The route, in the root stack, at the construct path `httpApi.addRoutes` gave it
 * (`Api/HttpApi/GET--api--v1--chats/Resource`), so its logical id is the one of every earlier
 * deployment. Why it must be: API Gateway refuses a second route with the same key (409
 * ConflictException), and CloudFormation creates a resource under a new logical id before it
 * deletes the old one, so a route that moved (to a nested stack, or to another id) would block
 * the update of an existing deployment. Its integration may move: integrations have no key.
 */
function routeInRoot(httpApi: HttpApi, route: RouteSpec, integrationId: string): CfnRoute {
  const holder = new Construct(httpApi, `${route.method}${route.path}`);
  return new CfnRoute(holder, 'Resource', {
    apiId: httpApi.apiId,
    routeKey: `${route.method} ${route.path}`,
    authorizationType: 'NONE',
    target: `integrations/${integrationId}`,
  });
}
