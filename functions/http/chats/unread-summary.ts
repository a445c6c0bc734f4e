/** GET /api/v1/chats/unread-summary (contract §3.5, §5.3.7). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/chat-reads.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { queryBoolean } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({ archived: z.optional(queryBoolean) }),
  replies: {
    200: json(
      'Unread messages over all chats (§2.9).',
      z.strictObject({ total_unread: z.int(), unread_by_agent: z.record(z.string(), z.int()) }),
    ),
  },
};

export const handler = http('chats/unread-summary', schemas, async ({ query }) => ({
  status: 200,
  body: await Chats.unreadSummary(query.archived),
}));
