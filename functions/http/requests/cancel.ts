/** POST /api/v1/requests/{requestId}/cancel: cancel a pending request (contract §5.5.5). No body. */
import * as Requests from '../../core/requests.js';
import { actorOf } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Request } from '../../model/resources.js';
import { requestPath } from './path.js';

export const schemas = { path: requestPath, replies: { 200: json('The cancelled request.', Request) } };

export const handler = http(
  'requests/cancel',
  schemas,
  async ({ path, event, config, keyed, deadline }) => ({
    status: 200,
    body: await Requests.cancel(config, path.requestId, actorOf(event, config), deadline, keyed),
  }),
  { committedReply: { status: 200 } },
);
