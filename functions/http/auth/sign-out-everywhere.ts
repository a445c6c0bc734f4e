/**
 * DELETE /api/v1/auth/sessions (contract §1.11.1, "sign out everywhere"): deletes every browser
 * session's record, so every session so far is refused (at once in this instance, within
 * SESSION_CHECK_MS in the others and on open event streams), and clears this browser's cookies.
 * Needs the secret or a session, as any write.
 */
import * as Sessions from '../../core/sessions.js';
import { cookieIsSecure } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';

export const schemas = {
  replies: { 204: noContent('Every session signed so far is refused from now on; this cookie is cleared.') },
};

export const handler = http('auth/sign-out-everywhere', schemas, async ({ event }) => {
  await Sessions.signOutEverywhere();
  return { status: 204, cookies: Sessions.clearSessionCookies(cookieIsSecure(event)) };
});
