/** DELETE /api/v1/push/subscribe (contract §5.10.2): `{ ok, removed }`. */
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';
import { subscriptionBody } from './schemas.js';

export const schemas = subscriptionBody;

export const handler = http('push/unsubscribe', schemas, async ({ body, config }) => ({
  status: 200,
  body: await Push.unsubscribe(body, config),
}));
