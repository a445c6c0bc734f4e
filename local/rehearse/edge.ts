/**
 * The CloudFront distribution of the assembly, as the viewer's front door: its behaviors in order
 * (path patterns, allowed methods), their viewer-request CloudFront Functions (run in a VM
 * context as cloudfront-js-2.0 runs them), the origin each behavior targets with the origin's
 * custom headers (the origin-verify value), the managed origin request policy's forwarding (every
 * viewer header but Host, which becomes the origin's), and the response headers policy.
 *
 * Origins are told apart by their domain: the HTTP API's endpoint (api-gateway.ts), the function
 * URL (a response-streaming invocation), a bucket served from its deployment's files (the web
 * app), or a bucket on the local S3 (the media bucket's form uploads).
 * Not rehearsed: caching, compression, TLS (the viewer speaks plain HTTP on loopback).
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { extname } from 'node:path';
import { runInNewContext } from 'node:vm';
import type { Assembly } from './assembly.js';
import { globPattern } from './glob.js';
import { payloadV2, serveHttpApi } from './api-gateway.js';
import type { HttpApi } from './api-gateway.js';
import type { FunctionHost } from './host.js';

/** The parts of CloudFront's configuration the rehearsal reads (CloudFormation's property names). */
interface CacheBehavior {
  PathPattern?: string;
  TargetOriginId: string;
  AllowedMethods?: string[];
  FunctionAssociations?: { EventType: string; FunctionARN: string }[];
  ResponseHeadersPolicyId?: string;
}
interface DistributionConfig {
  Origins: {
    Id: string;
    DomainName: string;
    OriginPath?: string;
    OriginCustomHeaders?: { HeaderName: string; HeaderValue: string }[];
  }[];
  CacheBehaviors?: CacheBehavior[];
  DefaultCacheBehavior: CacheBehavior;
}
interface HeadersPolicyConfig {
  SecurityHeadersConfig?: {
    ContentSecurityPolicy?: { ContentSecurityPolicy: string };
    ContentTypeOptions?: unknown;
    FrameOptions?: { FrameOption: string };
    ReferrerPolicy?: { ReferrerPolicy: string };
    StrictTransportSecurity?: { AccessControlMaxAgeSec: number; IncludeSubdomains?: boolean; Preload?: boolean };
  };
  CustomHeadersConfig?: { Items?: { Header: string; Value: string }[] };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface Behavior {
  pattern: RegExp;
  methods: Set<string>;
  origin: { domain: string; path: string; headers: Record<string, string> };
  viewerRequest?: (event: CloudFrontEvent) => unknown;
  responseHeaders: Record<string, string>;
}

interface CloudFrontEvent {
  version: '1.0';
  context: { eventType: string; distributionDomainName: string; distributionId: string; requestId: string };
  viewer: { ip: string };
  request: {
    method: string;
    uri: string;
    querystring: Record<string, { value: string }>;
    headers: Record<string, { value: string }>;
    cookies: Record<string, { value: string }>;
  };
}

export interface Origins {
  /** The HTTP API's domain, and its router. */
  api: { domain: string; http: HttpApi };
  /** The function URL's domain and its function's key. */
  functionUrl: { domain: string; functionKey: string; permitted: boolean };
  /** Buckets served from their deployments' files, by regional domain. */
  staticBuckets: Map<string, Map<string, { file: string; cacheControl?: string }>>;
  /** Buckets on the local S3, by regional domain: the S3 front's URL and the bucket's name. */
  s3Buckets: Map<string, { endpoint: string; bucket: string }>;
}

export function readDistribution(assembly: Assembly): Behavior[] {
  const distributions = assembly.resources('AWS::CloudFront::Distribution');
  if (distributions.length !== 1)
    throw new Error(`The rehearsal serves one distribution; found ${distributions.length}.`);
  const config = distributions[0]!.properties.DistributionConfig as DistributionConfig;
  const functions = new Map<string, (event: CloudFrontEvent) => unknown>();
  for (const fn of assembly.resources('AWS::CloudFront::Function')) {
    const arn = String(assembly.attribute(fn.stack, fn.logicalId, 'FunctionARN'));
    const code = String(fn.properties.FunctionCode);
    const sandbox: Record<string, unknown> = {};
    runInNewContext(`${code}\n;globalThis.__handler = handler;`, sandbox, { timeout: 1000 });
    functions.set(arn, sandbox.__handler as (event: CloudFrontEvent) => unknown);
  }
  const policies = new Map<string, Record<string, string>>();
  for (const policy of assembly.resources('AWS::CloudFront::ResponseHeadersPolicy'))
    policies.set(assembly.ref(policy.stack, policy.logicalId), responseHeadersOf(policy.properties));
  const origins = new Map<string, Behavior['origin']>();
  for (const origin of config.Origins) {
    const headers: Record<string, string> = {};
    for (const h of (origin.OriginCustomHeaders ?? []) as { HeaderName: string; HeaderValue: string }[])
      headers[h.HeaderName.toLowerCase()] = h.HeaderValue;
    origins.set(origin.Id, { domain: String(origin.DomainName), path: origin.OriginPath ?? '', headers });
  }
  const behavior = (b: CacheBehavior, pattern: string): Behavior => {
    const origin = origins.get(b.TargetOriginId);
    if (!origin) throw new Error(`Behavior ${pattern}: no origin ${b.TargetOriginId}.`);
    const association = ((b.FunctionAssociations ?? []) as { EventType: string; FunctionARN: string }[]).find(
      (a) => a.EventType === 'viewer-request',
    );
    const viewerRequest = association ? functions.get(association.FunctionARN) : undefined;
    if (association && !viewerRequest)
      throw new Error(`Behavior ${pattern}: its function ${association.FunctionARN} is not in the assembly.`);
    return {
      pattern: globPattern(pattern),
      methods: new Set((b.AllowedMethods as string[] | undefined) ?? ['GET', 'HEAD']),
      origin,
      ...(viewerRequest ? { viewerRequest } : {}),
      responseHeaders: b.ResponseHeadersPolicyId ? (policies.get(b.ResponseHeadersPolicyId) ?? {}) : {},
    };
  };
  return [
    ...(config.CacheBehaviors ?? []).map((b) => behavior(b, b.PathPattern ?? '')),
    behavior(config.DefaultCacheBehavior, '*'),
  ];
}

function responseHeadersOf(properties: Record<string, unknown>): Record<string, string> {
  const config = properties.ResponseHeadersPolicyConfig as HeadersPolicyConfig;
  const out: Record<string, string> = {};
  const security = config.SecurityHeadersConfig ?? {};
  if (security.ContentSecurityPolicy)
    out['content-security-policy'] = security.ContentSecurityPolicy.ContentSecurityPolicy;
  if (security.ContentTypeOptions) out['x-content-type-options'] = 'nosniff';
  if (security.FrameOptions) out['x-frame-options'] = security.FrameOptions.FrameOption;
  if (security.ReferrerPolicy) out['referrer-policy'] = security.ReferrerPolicy.ReferrerPolicy;
  if (security.StrictTransportSecurity) {
    const s = security.StrictTransportSecurity;
    out['strict-transport-security'] =
      `max-age=${s.AccessControlMaxAgeSec}${s.IncludeSubdomains ? '; includeSubDomains' : ''}${s.Preload ? '; preload' : ''}`;
  }
  for (const h of (config.CustomHeadersConfig?.Items ?? []) as { Header: string; Value: string }[])
    out[h.Header.toLowerCase()] = h.Value;
  return out;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain',
  '.woff2': 'font/woff2',
};

/** The distribution's request handler. */
export function distributionHandler(behaviors: Behavior[], origins: Origins, host: FunctionHost): Handler {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://rehearsal');
    const method = req.method ?? 'GET';
    const behavior = behaviors.find((b) => b.pattern.test(url.pathname))!;
    for (const [name, value] of Object.entries(behavior.responseHeaders)) res.setHeader(name, value);
    if (!behavior.methods.has(method))
      return plain(
        res,
        403,
        'This distribution is not configured to allow the HTTP request method that was used for this request.',
      );
    let uri = url.pathname;
    if (behavior.viewerRequest) {
      const event = viewerEvent(req, url);
      const out = behavior.viewerRequest(event) as
        CloudFrontEvent['request'] | { statusCode: number; statusDescription?: string };
      if ('statusCode' in out) return plain(res, out.statusCode, out.statusDescription ?? '');
      uri = out.uri;
      for (const name of Object.keys(req.headers))
        if (!(name in out.headers) && name !== 'host') delete req.headers[name];
      for (const [name, { value }] of Object.entries(out.headers)) if (name !== 'host') req.headers[name] = value;
    }
    // The managed policy AllViewerExceptHostHeader: the origin's own Host, the viewer's address added.
    const viewerIp = (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
    req.headers['x-forwarded-for'] = req.headers['x-forwarded-for']
      ? `${req.headers['x-forwarded-for']}, ${viewerIp}`
      : viewerIp;
    req.headers['cloudfront-viewer-address'] = `${viewerIp}:${req.socket.remotePort ?? 0}`;
    req.headers.via = '2.0 rehearsal.cloudfront.net (CloudFront)';
    for (const [name, value] of Object.entries(behavior.origin.headers)) req.headers[name] = value;
    req.headers.host = behavior.origin.domain;
    req.url = `${behavior.origin.path}${uri}${url.search}`;
    return toOrigin(behavior.origin.domain, origins, host, req, res);
  };
}

async function toOrigin(
  domain: string,
  origins: Origins,
  host: FunctionHost,
  req: IncomingMessage,
  res: ServerResponse,
) {
  if (domain === origins.api.domain) return serveHttpApi(origins.api.http, host, domain, req, res);
  if (domain === origins.functionUrl.domain) return serveFunctionUrl(origins.functionUrl, host, req, res);
  const files = origins.staticBuckets.get(domain);
  if (files) return serveFiles(files, req, res);
  const bucket = origins.s3Buckets.get(domain);
  if (bucket) return forwardToS3(bucket, req, res);
  plain(res, 502, `No origin answers for ${domain}.`);
}

function viewerEvent(req: IncomingMessage, url: URL): CloudFrontEvent {
  const headers: Record<string, { value: string }> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && name !== 'cookie')
      headers[name] = { value: Array.isArray(value) ? value.join(',') : value };
  const querystring: Record<string, { value: string }> = {};
  for (const [name, value] of url.searchParams) querystring[name] = { value };
  return {
    version: '1.0',
    context: {
      eventType: 'viewer-request',
      distributionDomainName: 'rehearsal.cloudfront.net',
      distributionId: 'EREHEARSAL',
      requestId: 'rehearsal',
    },
    viewer: { ip: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '') },
    request: { method: req.method ?? 'GET', uri: url.pathname, querystring, headers, cookies: {} },
  };
}

async function serveFunctionUrl(
  origin: Origins['functionUrl'],
  host: FunctionHost,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!origin.permitted) return plain(res, 403, 'Forbidden');
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const event = payloadV2(req, Buffer.concat(chunks), {
    routeKey: '$default',
    apiId: origin.domain.split('.')[0]!,
    domainName: origin.domain,
  });
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  let started = false;
  try {
    await host.invokeStreaming(
      origin.functionKey,
      event,
      {
        head: (metadata) => {
          started = true;
          const cookies = metadata.cookies?.length ? { 'set-cookie': metadata.cookies } : {};
          res.writeHead(metadata.statusCode ?? 200, { ...metadata.headers, ...cookies });
          res.flushHeaders();
        },
        chunk: (data) => {
          if (!res.destroyed) res.write(data);
        },
        end: () => res.end(),
      },
      { requestId: event.requestContext.requestId, signal: gone.signal },
    );
  } catch {
    if (!started && !res.headersSent) return plain(res, 502, 'Bad Gateway');
  }
  if (!res.writableEnded) res.end();
}

async function serveFiles(
  files: Map<string, { file: string; cacheControl?: string }>,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const key =
    decodeURIComponent(new URL(req.url ?? '/', 'http://rehearsal').pathname.replace(/^\//, '')) || 'index.html';
  const found = files.get(key);
  // A private bucket behind Origin Access Control answers 403 for a key it does not hold.
  if (!found) return plain(res, 403, 'AccessDenied');
  const body = readFileSync(found.file);
  res.writeHead(200, {
    'content-type': TYPES[extname(key)] ?? 'application/octet-stream',
    'content-length': body.length,
    ...(found.cacheControl ? { 'cache-control': found.cacheControl } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

function forwardToS3(bucket: { endpoint: string; bucket: string }, req: IncomingMessage, res: ServerResponse) {
  const target = new URL(`/${bucket.bucket}${req.url ?? '/'}`, bucket.endpoint);
  const headers = { ...req.headers, host: target.host };
  return new Promise<void>((done) => {
    const forward = httpRequest(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('end', done);
    });
    forward.on('error', () => {
      plain(res, 502, 'Bad Gateway');
      done();
    });
    req.pipe(forward);
  });
}

function plain(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'content-type': 'text/plain' });
  res.end(message);
}
