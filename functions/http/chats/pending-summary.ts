/** GET /api/v1/chats/pending-summary (contract §3.5, §5.3.7). */
import { z } from 'zod';
import * as Chats from '../../core/chats.js';
import { http } from '../../middleware/http.js';
import { queryBoolean } from '../../middleware/validate.js';

export const schemas = { query: z.object({ archived: queryBoolean.optional() }) };

export const handler = http('chats/pending-summary', schemas, async ({ query }) => ({
  status: 200,
  body: await Chats.pendingSummary(query.archived),
}));
