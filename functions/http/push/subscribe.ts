/** POST /api/v1/push/subscribe (contract §5.10.1): 201 with the stored (or kept) id. */
import * as z from '../../platform/zod.js';
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';
import { id } from '../../model.js';
import { json } from '../../model/replies.js';
import { header } from '../../middleware/types.js';
import { subscriptionBody } from './schemas.js';

export const schemas = {
  ...subscriptionBody,
  replies: { 201: json('The stored subscription.', z.strictObject({ id, endpoint: z.string() })) },
};

export const handler = http('push/subscribe', schemas, async ({ body, event, config }) => ({
  status: 201,
  body: await Push.subscribe(body, header(event, 'user-agent'), config),
}));
