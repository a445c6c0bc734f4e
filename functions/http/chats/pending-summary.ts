/** GET /api/v1/chats/pending-summary (contract §3.5, §5.3.7). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/chat-reads.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { queryBoolean } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({ archived: z.optional(queryBoolean) }),
  replies: {
    200: json('Pending requests over all chats (§2.9).', z.strictObject({ pending_requests_total: z.int() })),
  },
};

export const handler = http('chats/pending-summary', schemas, async ({ query }) => ({
  status: 200,
  body: await Chats.pendingSummary(query.archived),
}));
