/**
 * CORS (contract §1.13). Hand-written rather than @middy/http-cors: the contract echoes any
 * Origin when the allow-list is empty, echoes only exact matches otherwise, sends nothing
 * without an Origin, and reads the list from the live configuration on every request.
 */
import type { InstanceConfig } from '../platform/instance-config.js';
import type { HttpEvent, HttpMiddleware, HttpRequest } from './types.js';
import { header, stateOf } from './types.js';

export const PREFLIGHT_HEADERS = {
  'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
  'access-control-allow-headers': 'Authorization,Content-Type,Idempotency-Key,X-Instance-Secret',
};

/** The Access-Control-Allow-Origin value for a request, or undefined to send none. */
export function allowedOrigin(origin: string | undefined, allowList: readonly string[]): string | undefined {
  if (!origin) return undefined;
  if (allowList.length === 0) return origin;
  return allowList.includes(origin) ? origin : undefined;
}

/** The CORS headers a response to `event` carries (the preflight's too, for OPTIONS). */
export function corsHeaders(event: HttpEvent, config: InstanceConfig): Record<string, string> {
  const origin = allowedOrigin(header(event, 'origin'), config.server.corsOrigins);
  const preflight = event.requestContext?.http?.method === 'OPTIONS';
  return {
    ...(origin ? { 'access-control-allow-origin': origin, vary: 'Origin' } : {}),
    ...(preflight ? PREFLIGHT_HEADERS : {}),
  };
}

function decorate(request: HttpRequest): void {
  const response = request.response;
  const config = stateOf(request).config;
  if (!response || !config) return;
  response.headers = { ...response.headers, ...corsHeaders(request.event, config) };
}

export function cors(): HttpMiddleware {
  return { after: decorate, onError: decorate };
}
