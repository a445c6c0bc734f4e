/** GET /api/v1/tags/suggestions (contract §5.8). */
import { z } from 'zod';
import * as Tags from '../../core/tags.js';
import { http } from '../../middleware/http.js';
import { queryInt } from '../../middleware/validate.js';
import { LIMITS, utf8Bytes } from '../schemas.js';

export const schemas = {
  query: z.object({
    // A prefix longer than the longest tag matches none, and would not fit in a sort key condition.
    q: z
      .string()
      .refine((q) => utf8Bytes(q) <= LIMITS.tagBytes, `q must be at most ${LIMITS.tagBytes} UTF-8 bytes.`)
      .optional(),
    limit: queryInt(1, 100, 10),
  }),
};

export const handler = http('tags/suggestions', schemas, async ({ query }) => ({
  status: 200,
  body: { data: await Tags.suggest(query.q, query.limit) },
}));
