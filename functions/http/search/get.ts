/** GET /api/v1/search: chats by title, messages by full text, one ordering (contract §5.7, §9). */
import * as z from '../../platform/zod.js';
import * as Search from '../../core/search.js';
import { http } from '../../middleware/http.js';
import { id } from '../../model.js';
import { Cursor, json } from '../../model/replies.js';
import { queryInt } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({
    q: z.string().check(z.trim(), z.minLength(1, 'Search query is required')),
    scope: z._default(z.enum(['all', 'titles', 'messages']), 'titles'),
    cursor: z.optional(z.string()),
    limit: queryInt(1, 100, 50),
  }),
  replies: {
    200: json(
      'Chat and message hits (§2.8).',
      z.strictObject({
        chats: z.array(z.strictObject({ id, title: z.string(), snippet: z.string(), agent_ids: z.array(z.string()) })),
        messages: z.array(
          z.strictObject({
            id,
            chat_id: id,
            chat_title: z.string(),
            snippet: z.string(),
            agent_ids: z.array(z.string()),
          }),
        ),
        cursor: Cursor,
      }),
    ),
  },
};

export const handler = http('search/get', schemas, async ({ query }) => ({
  status: 200,
  body: await Search.search(query),
}));
