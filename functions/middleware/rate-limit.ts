/** Write rate limiting (contract §1.12), after authentication, before validation. */
import { RateLimitedError } from '../errors.js';
import { rateLimitSettings } from '../platform/config.js';
import { countWrite } from '../store/rate-limit-repo.js';
import type { HttpEvent, HttpMiddleware } from './types.js';
import { header } from './types.js';

const usable = (v: string | undefined) => {
  const value = v?.trim();
  return value && value.toLowerCase() !== 'unknown' ? value : undefined;
};

/** The client's bucket: the platform's source IP; forwarded headers only when trusted and no IP is known. */
export function clientOf(event: HttpEvent, trustProxyHeaders: boolean): string {
  const ip = usable(event.requestContext?.http?.sourceIp);
  if (ip) return ip;
  if (trustProxyHeaders) {
    const forwarded =
      usable(header(event, 'x-forwarded-for')?.split(',')[0]) ??
      usable(header(event, 'x-real-ip')) ??
      usable(header(event, 'cf-connecting-ip'));
    if (forwarded) return forwarded;
  }
  return 'instance';
}

export function rateLimit(): HttpMiddleware {
  return {
    before: async (request) => {
      if (request.event.requestContext?.http?.method === 'OPTIONS') return;
      const { max, windowMs, trustProxyHeaders } = rateLimitSettings();
      const decision = await countWrite(clientOf(request.event, trustProxyHeaders), Date.now(), max, windowMs);
      if (!decision.allowed) throw new RateLimitedError(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
    },
  };
}
