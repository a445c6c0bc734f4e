/**
 * DELETE /api/v1/auth/sessions (contract §1.11.1, "sign out everywhere"): replaces the session-signing
 * key, so every browser session signed so far is refused (in every container within
 * SESSION_KEY_TTL_MS), and clears this browser's cookie. Needs the secret or a session, as any write.
 */
import * as Sessions from '../../core/sessions.js';
import { cookieIsSecure } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';

export const handler = http('auth/sign-out-everywhere', {}, async ({ event }) => {
  await Sessions.signOutEverywhere();
  return { status: 204, headers: { 'set-cookie': Sessions.clearSessionCookie(cookieIsSecure(event)) } };
});
