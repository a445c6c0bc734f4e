/**
 * Push endpoint bodies (contract §5.10): any JSON object; the endpoint and key rules, with
 * their exact messages, are core/push-endpoint.ts's, checked before the push-enabled check.
 * Only sizes are checked here (docs/architecture.md "Limits"): a subscription is one item, and push services'
 * endpoints run to a few hundred characters, their keys to 87 (p256dh) and 22 (auth).
 */
import * as z from '../../platform/zod.js';
import { boundedChars } from '../schemas.js';

/** Longest endpoint URL kept (Web Push endpoints are far shorter). */
export const MAX_ENDPOINT_CHARS = 4_096;
/** Longest key string (base64url of a 65-byte P-256 point is 87 characters). */
export const MAX_KEY_CHARS = 1_000;

const keys = z.unknown().check(
  z.superRefine((value, ctx) => {
    if (typeof value !== 'object' || value === null) return;
    for (const name of ['p256dh', 'auth']) {
      const key = (value as Record<string, unknown>)[name];
      if (typeof key === 'string' && key.length > MAX_KEY_CHARS)
        ctx.addIssue({ code: 'custom', message: `keys.${name} must be at most ${MAX_KEY_CHARS} characters.` });
    }
  }),
);

export const subscriptionBody = {
  body: z.looseObject({
    endpoint: z.optional(boundedChars('endpoint', MAX_ENDPOINT_CHARS)),
    keys: z.optional(keys),
  }),
};
