/** GET /api/v1/search: chats by title, messages by full text, one ordering (contract §5.7, §9). */
import { z } from 'zod';
import * as Search from '../../core/search.js';
import { http } from '../../middleware/http.js';
import { queryInt } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({
    q: z.string().trim().min(1, 'Search query is required'),
    scope: z.enum(['all', 'titles', 'messages']).default('titles'),
    cursor: z.string().optional(),
    limit: queryInt(1, 100, 50),
  }),
};

export const handler = http('search/get', schemas, async ({ query }) => ({
  status: 200,
  body: await Search.search(query),
}));
