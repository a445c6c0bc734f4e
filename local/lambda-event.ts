/**
 * What a local HTTP request becomes before the handler sees it, as on AWS: the API Gateway HTTP
 * API payload-v2 event (headers, query, cookies, the body as text or base64) and the Lambda
 * context, whose time left counts down from the function timeout.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { RouteSpec } from '../lib/routes.js';

/** Bodies API Gateway passes as text; any other is base64 with `isBase64Encoded`. */
const TEXT_TYPES = /^(application\/([\w.+-]*\+)?json|text\/|application\/x-www-form-urlencoded)/i;

/** The payload-v2 event of `req`: `$default` as its routeKey when `match` names no route (the catch-all, a function URL). */
export function toEvent(
  req: IncomingMessage,
  body: Buffer,
  match: { route?: RouteSpec; params: Record<string, string> },
): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && name !== 'cookie') headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = name in query ? `${query[name]},${value}` : value;
  const method = req.method ?? 'GET';
  const routeKey = match.route ? `${match.route.method} ${match.route.path}` : '$default';
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  const sourceIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: req.headers.cookie?.split(/;\s*/),
    headers,
    queryStringParameters: Object.keys(query).length > 0 ? query : undefined,
    pathParameters: Object.keys(match.params).length > 0 ? match.params : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    body: body.length === 0 ? undefined : text ? body.toString('utf8') : body.toString('base64'),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** A handler sees its function timeout as the time left (getRemainingTimeInMillis). */
export function contextFor(name: string, requestId: string, budgetMs: number): Context {
  const deadline = Date.now() + budgetMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
