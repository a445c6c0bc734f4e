/**
 * The catch-all route ($default): answers CORS preflight (204) for any /api path and the
 * 404 envelope for unknown paths and unsupported methods (contract §1.1, §1.13). Its function
 * may not touch the table (lib/constructs/api.ts), so it makes no storage call: its CORS comes
 * from the configuration the container already knows (core/instance-config.ts lastKnownConfig).
 */
import { RouteNotFoundError } from '../errors.js';
import { http } from '../middleware/http.js';
import { preflight } from '../model/replies.js';

export const handler = http(
  { method: 'ANY', writes: false, auth: 'public' },
  { replies: { 204: preflight() } },
  async ({ event }) => {
    if (event.requestContext.http.method === 'OPTIONS') return { status: 204 };
    throw new RouteNotFoundError();
  },
);
