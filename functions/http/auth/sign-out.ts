/**
 * DELETE /api/v1/auth/session (contract §1.11.1): ends this browser's session (its record goes, so
 * the same cookie presented again is refused everywhere: at once in this instance, within
 * SESSION_CHECK_MS in the others and on the event stream) and clears its cookies (204).
 */
import * as Sessions from '../../core/sessions.js';
import { cookieIsSecure } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';

export const schemas = {
  replies: { 204: noContent("This browser's session cookie is cleared (Set-Cookie with Max-Age=0).") },
};

export const handler = http('auth/sign-out', schemas, async ({ event }) => {
  await Sessions.signOut(event.cookies, Date.now());
  return { status: 204, cookies: Sessions.clearSessionCookies(cookieIsSecure(event)) };
});
