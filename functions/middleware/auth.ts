/**
 * Instance-secret authentication (contract §1.11): `Authorization: Bearer <secret>` or the
 * `token` query parameter; writes always, reads only with the read toggle, health never.
 * Comparison is constant-time over digests, so neither content nor length leaks.
 * A browser's session cookie (§1.11.1, core/sessions.ts) counts as the secret; a write it alone
 * authenticates must come from the service's own origin, and a session old enough is renewed.
 * A wrong Bearer or `token` counts as a failed attempt of the client (core/secret-guesses.ts: 401,
 * then 429 past the limit); the right secret passes with no storage call.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthClass } from '../../lib/routes.js';
import { anyLockoutKnown, failedAttempt, refuseKnownLockout } from '../core/secret-guesses.js';
import { checkSession, renewedSession, sessionCookieOf, sessionSetCookies } from '../core/sessions.js';
import type { Session } from '../core/sessions.js';
import { rateLimitSettings } from '../platform/env.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { INSTANCE_SECRET_UNREADABLE } from '../platform/instance-config.js';
import { VIEWER_HOST_HEADER, cameThroughEdge } from './origin-verify.js';
import { clientOf } from './rate-limit.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import type { HttpEvent, HttpMiddleware } from './types.js';
import { header, stateOf } from './types.js';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

export function secretMatches(given: string | undefined, secret: string): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), digest(secret));
}

export function requiresSecret(authClass: AuthClass, config: InstanceConfig): boolean {
  const { instanceSecretEnabled, readEndpointsRequireInstanceSecret } = config.security;
  if (!instanceSecretEnabled || authClass === 'public') return false;
  return authClass === 'write' || readEndpointsRequireInstanceSecret;
}

/**
 * Whether `given` is the instance secret. A function the stack did not let read the secret must
 * never check it (lib/routes.ts auth classes): that is a broken deployment, an error.
 */
export function isInstanceSecret(given: string | undefined, secret: string): boolean {
  if (secret === INSTANCE_SECRET_UNREADABLE) throw new Error('This function may not read the instance secret');
  return secretMatches(given, secret);
}

/** The credentials a request offers in place of the secret: the Bearer header's and the `token` parameter's. */
function offeredSecrets(event: HttpEvent): { bearer: string | undefined; token: string | undefined } {
  const authorization = header(event, 'authorization');
  const bearer = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
  return { bearer, token: event.queryStringParameters?.token };
}

export function presentsSecret(event: HttpEvent, secret: string): boolean {
  const { bearer, token } = offeredSecrets(event);
  // Evaluate both so timing does not reveal which form was tried.
  const viaHeader = isInstanceSecret(bearer, secret);
  const viaQuery = isInstanceSecret(token, secret);
  return viaHeader || viaQuery;
}

/** Whether the request tried the secret at all (a Bearer header or a `token`), rightly or not. */
function triesSecret(event: HttpEvent): boolean {
  const { bearer, token } = offeredSecrets(event);
  return bearer !== undefined || token !== undefined;
}

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])(:\d+)?$/i;

/** The scheme the client used: what the platform forwarded, else plain HTTP on loopback (npm start), else HTTPS. */
function schemeOf(event: HttpEvent): 'http' | 'https' {
  const forwarded = header(event, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  if (forwarded === 'http' || forwarded === 'https') return forwarded;
  return LOOPBACK_HOST.test(header(event, 'host') ?? '') ? 'http' : 'https';
}

/** Session cookies are `Secure` except over plain HTTP on loopback (§1.11.1). */
export const cookieIsSecure = (event: HttpEvent): boolean => schemeOf(event) === 'https';

/**
 * Whether the request's `Origin` is the service's own: the origin it was addressed to (scheme and
 * Host), the host the viewer used as the stack's CloudFront reports it (VIEWER_HOST_HEADER, believed
 * only on a request carrying the origin-verify secret: behind CloudFront the function sees API
 * Gateway's host name, not the one the browser used; lib/constructs/edge.ts), or that of
 * `server.publicBaseUrl` (docs/web-app.md "Browser sessions").
 */
export async function fromOwnOrigin(event: HttpEvent, config: InstanceConfig): Promise<boolean> {
  const origin = header(event, 'origin');
  if (!origin) return false;
  const host = header(event, 'host');
  if (host && origin === `${schemeOf(event)}://${host}`) return true;
  const viewerHost = header(event, VIEWER_HOST_HEADER);
  // CloudFront serves viewers over HTTPS only; the secret is read only when the origin would match.
  if (viewerHost && origin === `https://${viewerHost}` && (await cameThroughEdge(event))) return true;
  try {
    return origin === new URL(config.server.publicBaseUrl).origin;
  } catch {
    return false;
  }
}

/** The request's `Origin` when it is the service's own (a page of the web app), else undefined. */
export const ownOrigin = async (event: HttpEvent, config: InstanceConfig): Promise<string | undefined> =>
  (await fromOwnOrigin(event, config)) ? header(event, 'origin') : undefined;

const WRITE_METHODS = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** The renewed session's cookies a response carries (set in `before`, sent in `after`). */
const renewals = new WeakMap<HttpEvent, string[]>();
/** The browser session a request was authenticated by (not set for the secret, or when none was needed). */
const sessions = new WeakMap<HttpEvent, Session>();

/** The session that authenticated this request, if a session cookie did (the event stream watches it). */
export const authenticatedSession = (event: HttpEvent): Session | undefined => sessions.get(event);

/**
 * Who a write came from, for the decision log (§5.5.6): `session` (a browser session cookie),
 * `secret` (the instance secret, as a Bearer or `token=`), or `open` (no credential needed: the
 * instance secret is off).
 */
export function actorOf(event: HttpEvent, config: InstanceConfig): 'session' | 'secret' | 'open' {
  if (!requiresSecret('write', config)) return 'open';
  return sessions.has(event) ? 'session' : 'secret';
}

export function authenticate(authClass: AuthClass): HttpMiddleware {
  return {
    before: async (request) => {
      const method = request.event.requestContext?.http?.method;
      if (method === 'OPTIONS') return;
      const { config } = stateOf(request);
      if (!requiresSecret(authClass, config)) return;
      const now = Date.now();
      if (presentsSecret(request.event, config.security.instanceSecret)) {
        // No storage call for the right secret; refused only where this instance saw the client guess too much.
        if (anyLockoutKnown())
          refuseKnownLockout(await clientOf(request.event, rateLimitSettings().trustProxyHeaders), now);
        return;
      }
      const cookie = sessionCookieOf(request.event.cookies);
      const session = cookie === undefined ? undefined : await checkSession(cookie, config, now);
      if (session === undefined) {
        if (triesSecret(request.event)) {
          await failedAttempt(await clientOf(request.event, rateLimitSettings().trustProxyHeaders), now);
        }
        throw new UnauthorizedError();
      }
      if (WRITE_METHODS.has(method ?? '') && !(await fromOwnOrigin(request.event, config))) throw new ForbiddenError();
      sessions.set(request.event, session);
      const renewed = await renewedSession(session, config, now);
      if (renewed) {
        renewals.set(request.event, sessionSetCookies(renewed.value, renewed.expiresMs, cookieIsSecure(request.event)));
      }
    },
    after: (request) => {
      const cookies = renewals.get(request.event);
      if (cookies && request.response) request.response.cookies = [...(request.response.cookies ?? []), ...cookies];
    },
  };
}
