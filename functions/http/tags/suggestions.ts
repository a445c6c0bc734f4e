/** GET /api/v1/tags/suggestions (contract §5.8). */
import { z } from 'zod';
import * as Tags from '../../core/tags.js';
import { http } from '../../middleware/http.js';
import { queryInt } from '../../middleware/validate.js';

export const schemas = { query: z.object({ q: z.string().optional(), limit: queryInt(1, 100, 10) }) };

export const handler = http('tags/suggestions', schemas, async ({ query }) => ({
  status: 200,
  body: { data: await Tags.suggest(query.q, query.limit) },
}));
