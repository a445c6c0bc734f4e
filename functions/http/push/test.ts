/**
 * POST /api/v1/push/test (contract §5.10.3): one notification to every device, answered with
 * the delivery counts once every attempt has ended. The body is optional (any JSON object).
 */
import * as z from '../../platform/zod.js';
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';

export const schemas = { body: z.looseObject({}), optionalObjectBody: true };

export const handler = http('push/test', schemas, async ({ body, config }) => ({
  status: 200,
  body: await Push.sendTest(body, config),
}));
