/** DELETE /api/v1/auth/session (contract §1.11.1): clears this browser's session cookie (204). */
import * as Sessions from '../../core/sessions.js';
import { cookieIsSecure } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';

export const handler = http('auth/sign-out', {}, async ({ event }) => ({
  status: 204,
  headers: { 'set-cookie': Sessions.clearSessionCookie(cookieIsSecure(event)) },
}));
