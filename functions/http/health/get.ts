/**
 * GET /api/v1/health (contract §2.10, §5.1): public, never rate-limited, and never a storage call
 * (lib/routes.ts `table: 'none'`): it answers while DynamoDB does not (docs/architecture.md "Timeouts").
 */
import { env } from '../../platform/env.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import * as z from '../../platform/zod.js';

/** The execution environment's start: uptime is counted from its cold start (§14 item 32). */
const startedAt = Date.now();

export const schemas = {
  replies: {
    200: json(
      'The service is up (§2.10).',
      z.strictObject({ service: z.literal('opengram'), status: z.literal('ok'), version: z.string(), uptime: z.int() }),
    ),
  },
};

export const handler = http('health/get', schemas, async () => ({
  status: 200,
  body: {
    service: 'opengram',
    status: 'ok',
    version: env().SERVICE_VERSION,
    uptime: Math.floor((Date.now() - startedAt) / 1000),
  },
}));
