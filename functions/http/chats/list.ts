/** GET /api/v1/chats: list chats with filters and cursor pagination (contract §5.3.2). */
import { z } from 'zod';
import * as Chats from '../../core/chats.js';
import { http } from '../../middleware/http.js';
import { queryBoolean, queryInt } from '../../middleware/validate.js';

export const schemas = {
  query: z.object({
    cursor: z.string().optional(),
    limit: queryInt(1, 100, 50),
    archived: queryBoolean.optional(),
    tag: z.string().optional(),
    agentId: z.string().optional(),
    query: z.string().optional(),
  }),
};

export const handler = http('chats/list', schemas, async ({ query }) => ({
  status: 200,
  body: await Chats.list(query),
}));
