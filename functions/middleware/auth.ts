/**
 * Instance-secret authentication (contract §1.11): `Authorization: Bearer <secret>` or the
 * `token` query parameter; writes always, reads only with the read toggle, health never.
 * Comparison is constant-time over digests, so neither content nor length leaks.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { AuthClass } from '../../lib/routes.js';
import { UnauthorizedError } from '../errors.js';
import { INSTANCE_SECRET_UNREADABLE } from '../platform/instance-config.js';
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

export function presentsSecret(event: HttpEvent, secret: string): boolean {
  // A function the stack did not let read the secret must never check it (lib/routes.ts auth classes).
  if (secret === INSTANCE_SECRET_UNREADABLE) throw new Error('This function may not read the instance secret');
  const authorization = header(event, 'authorization');
  const bearer = authorization?.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : undefined;
  const token = event.queryStringParameters?.token;
  // Evaluate both so timing does not reveal which form was tried.
  const viaHeader = secretMatches(bearer, secret);
  const viaQuery = secretMatches(token, secret);
  return viaHeader || viaQuery;
}

export function authenticate(authClass: AuthClass): HttpMiddleware {
  return {
    before: (request) => {
      if (request.event.requestContext?.http?.method === 'OPTIONS') return;
      const { config } = stateOf(request);
      if (!requiresSecret(authClass, config)) return;
      if (!presentsSecret(request.event, config.security.instanceSecret)) throw new UnauthorizedError();
    },
  };
}
