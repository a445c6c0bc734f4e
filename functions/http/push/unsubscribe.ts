/** DELETE /api/v1/push/subscribe (contract §5.10.2): `{ ok, removed }`. */
import * as z from '../../platform/zod.js';
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { subscriptionBody } from './schemas.js';

export const schemas = {
  ...subscriptionBody,
  replies: { 200: json('Whether one was removed.', z.strictObject({ ok: z.literal(true), removed: z.boolean() })) },
};

export const handler = http('push/unsubscribe', schemas, async ({ body, config }) => ({
  status: 200,
  body: await Push.unsubscribe(body, config),
}));
