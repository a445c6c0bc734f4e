/**
 * POST /api/v1/auth/session (contract §1.11.1, this project's extension): `{ "secret": "…" }` →
 * 204 with the session cookie; a wrong or missing secret is the 401 of §1.11, and failed attempts
 * past GUESS_LIMIT per client (core/secret-guesses.ts) are 429 with Retry-After. With the secret off: 204 and no cookie.
 * Public (it is how a browser gets a credential) and never keyed (its answer must not be replayed).
 *
 * A body without `secret` is a probe (the web app's, on load: its cookie is HttpOnly, so only the
 * service can say whether it is still good): 204 when the request carries a valid session, else
 * 401, which is not counted as a failed attempt (nothing was guessed).
 */
import * as z from '../../platform/zod.js';
import * as Sessions from '../../core/sessions.js';
import { cookieIsSecure, isInstanceSecret } from '../../middleware/auth.js';
import { UnauthorizedError } from '../../errors.js';
import { http } from '../../middleware/http.js';
import { failure, noContent } from '../../model/replies.js';
import { clientOf } from '../../middleware/rate-limit.js';
import { rateLimitSettings } from '../../platform/env.js';

// Anything but a string counts as a wrong secret (401, counted), never as a 400 that would tell a
// guesser which shapes are checked.
export const schemas = {
  body: z.looseObject({ secret: z.optional(z.unknown()) }),
  optionalObjectBody: true,
  replies: {
    204: noContent(
      'Signed in: Set-Cookie carries the session (HttpOnly, SameSite=Strict, Path=/api, 30 days, renewed while in ' +
        'use; §1.11.1). With the secret off, no cookie. A body without `secret` only probes: 204 when the ' +
        'request carries a valid session (the cookie is HttpOnly, so a page cannot tell), else 401, not counted ' +
        'as a failed attempt.',
    ),
    401: failure('UNAUTHORIZED: the secret is wrong, or a probe without `secret` carries no valid session.'),
  },
};

export const handler = http('auth/sign-in', schemas, async ({ body, config, event }) => {
  if (!('secret' in body)) {
    if (config.security.instanceSecretEnabled && !(await Sessions.isSignedIn(event.cookies, config, Date.now()))) {
      throw new UnauthorizedError();
    }
    return { status: 204 };
  }
  const given = typeof body.secret === 'string' ? body.secret : undefined;
  const secret = config.security.instanceSecret;
  const client = await clientOf(event, rateLimitSettings().trustProxyHeaders);
  const session = await Sessions.signIn(given, (g) => isInstanceSecret(g, secret), config, client, Date.now());
  if (session === undefined) return { status: 204 };
  return { status: 204, cookies: Sessions.sessionSetCookies(session.value, session.expiresMs, cookieIsSecure(event)) };
});
