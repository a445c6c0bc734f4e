/** GET /api/v1/chats: list chats with filters and cursor pagination (contract §5.3.2). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/chat-reads.js';
import { http } from '../../middleware/http.js';
import { json, page } from '../../model/replies.js';
import { Chat } from '../../model/resources.js';
import { queryBoolean, queryInt } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({
    cursor: z.optional(z.string()),
    limit: queryInt(1, 100, 50),
    archived: z.optional(queryBoolean),
    tag: z.optional(z.string()),
    agentId: z.optional(z.string()),
    query: z.optional(z.string()),
  }),
  replies: { 200: json('A page of chats (§5.3.2).', page(Chat)) },
};

export const handler = http('chats/list', schemas, async ({ query }) => ({
  status: 200,
  body: await Chats.list(query),
}));
