/** GET /api/v1/chats/{chatId}/requests: a chat's requests, oldest first (contract §5.5.2). */
import * as z from '../../platform/zod.js';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Request } from '../../model/resources.js';
import { chatPath } from '../chats/path.js';

export const schemas = {
  path: chatPath,
  query: z.object({ status: z._default(z.enum(['pending', 'resolved', 'cancelled', 'all']), 'pending') }),
  replies: { 200: json("The chat's requests, oldest first.", z.strictObject({ data: z.array(Request) })) },
};

export const handler = http('requests/list', schemas, async ({ path, query }) => ({
  status: 200,
  body: await Requests.list(path.chatId, query.status),
}));
