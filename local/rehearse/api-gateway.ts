/**
 * The HTTP API as API Gateway has it in the assembly: its `AWS::ApiGatewayV2::Route`s (route
 * keys, `$default`), their integrations (AWS_PROXY to a function, payload format 2.0), and the
 * functions' resource policies (`AWS::Lambda::Permission` for apigateway.amazonaws.com with a
 * SourceArn): a route whose function grants API Gateway no invoke answers 500, as it does on AWS.
 *
 * Matching follows HTTP API's rules: the route with the most literal segments first, `{name}`
 * one segment, `{name+}` the rest, method `ANY` any method, else `$default`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../request-body.js';
import type { Assembly } from './assembly.js';
import { globPattern } from './glob.js';
import type { FunctionHost } from './host.js';
import { FunctionError } from './types.js';

export interface ApiRoute {
  routeKey: string;
  method: string;
  pattern: RegExp;
  params: string[];
  rank: string;
  functionKey: string;
  /** Whether the function's resource policy lets this API invoke it for this route. */
  permitted: boolean;
}

export interface HttpApi {
  apiId: string;
  routes: ApiRoute[];
  fallback: ApiRoute | undefined;
  /** Problems found while reading the routes (printed at start). */
  problems: string[];
}

const TEXT_TYPES = /^(application\/([\w.+-]*\+)?json|text\/|application\/x-www-form-urlencoded)/i;

export function readHttpApi(assembly: Assembly, host: FunctionHost): HttpApi {
  const apis = assembly.resources('AWS::ApiGatewayV2::Api');
  if (apis.length !== 1) throw new Error(`The rehearsal serves one HTTP API; the assembly has ${apis.length}.`);
  const api = apis[0]!;
  const apiId = assembly.ref(api.stack, api.logicalId);
  const integrations = new Map<string, string>();
  const problems: string[] = [];
  for (const integration of assembly.resources('AWS::ApiGatewayV2::Integration')) {
    const p = integration.properties;
    const id = assembly.ref(integration.stack, integration.logicalId);
    if (p.IntegrationType !== 'AWS_PROXY' || p.PayloadFormatVersion !== '2.0') {
      problems.push(`integration ${integration.logicalId}: only AWS_PROXY with payload 2.0 is rehearsed`);
      continue;
    }
    integrations.set(id, String(p.IntegrationUri));
  }
  const permissions = assembly
    .resources('AWS::Lambda::Permission')
    .filter((p) => p.properties.Principal === 'apigateway.amazonaws.com')
    .map((p) => ({
      function: host.find(String(p.properties.FunctionName))?.key,
      action: String(p.properties.Action),
      source: p.properties.SourceArn === undefined ? /.*/ : globPattern(String(p.properties.SourceArn)),
    }));
  const routes: ApiRoute[] = [];
  let fallback: ApiRoute | undefined;
  for (const route of assembly.resources('AWS::ApiGatewayV2::Route')) {
    const p = route.properties;
    const routeKey = String(p.RouteKey);
    const target = /^integrations\/(.+)$/.exec(String(p.Target ?? ''));
    const uri = target ? integrations.get(target[1]!) : undefined;
    const fn = uri ? host.find(uri) : undefined;
    if (!fn) {
      problems.push(`route ${routeKey}: its integration names no function of the assembly`);
      continue;
    }
    const [method, path = ''] = routeKey === '$default' ? ['ANY', ''] : routeKey.split(' ');
    // The ARN API Gateway invokes with: arn:aws:execute-api:<region>:<account>:<api>/<stage>/<method><route path>.
    const sourceArn =
      `arn:aws:execute-api:${assembly.region}:${assembly.account}:${apiId}/$default/` +
      (routeKey === '$default' ? '$default' : `${method}${path}`);
    const permitted = permissions.some(
      (g) => g.function === fn.key && g.action === 'lambda:InvokeFunction' && g.source.test(sourceArn),
    );
    if (!permitted) problems.push(`route ${routeKey}: ${fn.logicalId} grants API Gateway no lambda:InvokeFunction`);
    const params: string[] = [];
    const segments = path.split('/').slice(1);
    const source = segments
      .map((s) => {
        const param = /^\{(\w+)(\+?)\}$/.exec(s);
        if (!param) return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        params.push(param[1]!);
        return param[2] ? '(.+)' : '([^/]+)';
      })
      .join('/');
    const entry: ApiRoute = {
      routeKey,
      method: method!,
      pattern: new RegExp(`^/${source}/?$`),
      params,
      rank: segments.map((s) => (s.startsWith('{') ? (s.endsWith('+}') ? '2' : '1') : '0')).join(''),
      functionKey: fn.key,
      permitted,
    };
    if (routeKey === '$default') fallback = entry;
    else routes.push(entry);
  }
  routes.sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0));
  return { apiId, routes, fallback, problems };
}

function match(api: HttpApi, method: string, path: string): { route?: ApiRoute; params: Record<string, string> } {
  for (const route of api.routes) {
    if (route.method !== method && route.method !== 'ANY') continue;
    const hit = route.pattern.exec(path);
    if (!hit) continue;
    const params: Record<string, string> = {};
    route.params.forEach((name, i) => {
      const raw = hit[i + 1] ?? '';
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        params[name] = raw;
      }
    });
    return { route, params };
  }
  return api.fallback ? { route: api.fallback, params: {} } : { params: {} };
}

/** The payload v2 event of a request, as API Gateway (or a function URL, routeKey `$default`) builds it. */
export function payloadV2(
  req: IncomingMessage,
  body: Buffer,
  options: { routeKey: string; params?: Record<string, string>; apiId: string; domainName: string },
) {
  const url = new URL(req.url ?? '/', 'http://rehearsal');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  const forwarded = headers['x-forwarded-for']?.split(',')[0]?.trim();
  return {
    version: '2.0',
    routeKey: options.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: options.params && Object.keys(options.params).length > 0 ? options.params : undefined,
    requestContext: {
      accountId: '000000000000',
      apiId: options.apiId,
      domainName: options.domainName,
      domainPrefix: options.domainName.split('.')[0],
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: forwarded ?? (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: options.routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
  };
}

const plain = (res: ServerResponse, status: number, message: string) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ message }));
};

/** Serves one request on the HTTP API (CloudFront's API origin hands it here). */
export async function serveHttpApi(
  api: HttpApi,
  host: FunctionHost,
  domainName: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://rehearsal').pathname;
  const { route, params } = match(api, req.method ?? 'GET', path);
  if (!route) return plain(res, 404, 'Not Found');
  const body = await readBody(req);
  if (body === 'too-large') return plain(res, 413, 'Request Entity Too Large');
  // Lambda refuses an invoke its resource policy does not allow; API Gateway then answers 500.
  if (!route.permitted) return plain(res, 500, 'Internal Server Error');
  const event = payloadV2(req, body, { routeKey: route.routeKey, params, apiId: api.apiId, domainName });
  let result: unknown;
  try {
    result = await host.invoke(route.functionKey, event, { requestId: event.requestContext.requestId });
  } catch (error) {
    if (error instanceof FunctionError && error.kind === 'Throttled') return plain(res, 503, 'Service Unavailable');
    if (error instanceof FunctionError && error.kind === 'TimedOut') return plain(res, 503, 'Service Unavailable');
    return plain(res, 500, 'Internal Server Error');
  }
  writeProxyResult(res, result);
}

/** A payload v2 result: a response object, or any other value as a 200 JSON body. */
export function writeProxyResult(res: ServerResponse, result: unknown): void {
  const shaped =
    result !== null && typeof result === 'object' && 'statusCode' in result
      ? (result as {
          statusCode: number;
          headers?: Record<string, string>;
          body?: string;
          isBase64Encoded?: boolean;
          cookies?: string[];
        })
      : { statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(result) };
  const payload = shaped.body ? Buffer.from(shaped.body, shaped.isBase64Encoded ? 'base64' : 'utf8') : undefined;
  const cookies = shaped.cookies?.length ? { 'set-cookie': shaped.cookies } : {};
  res.writeHead(shaped.statusCode, { ...shaped.headers, ...cookies });
  res.end(payload);
}
