/** POST /api/v1/push/subscribe (contract §5.10.1): 201 with the stored (or kept) id. */
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';
import { header } from '../../middleware/types.js';
import { subscriptionBody } from './schemas.js';

export const schemas = subscriptionBody;

export const handler = http('push/subscribe', schemas, async ({ body, event, config }) => ({
  status: 201,
  body: await Push.subscribe(body, header(event, 'user-agent'), config),
}));
