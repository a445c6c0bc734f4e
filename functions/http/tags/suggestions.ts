/** GET /api/v1/tags/suggestions (contract §5.8). */
import * as z from '../../platform/zod.js';
import * as Tags from '../../core/tags.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { queryInt } from '../../middleware/validate.js';
import { LIMITS } from '../../limits.js';
import { utf8Bytes } from '../schemas.js';

// A prefix longer than the longest tag matches none, and would not fit in a sort key condition.
const tagPrefix = z
  .string()
  .check(z.refine((q) => utf8Bytes(q) <= LIMITS.tagBytes, `q must be at most ${LIMITS.tagBytes} UTF-8 bytes.`));

export const schemas = {
  query: z.object({ q: z.optional(tagPrefix), limit: queryInt(1, 100, 10) }),
  replies: {
    200: json(
      'Tag suggestions, most used first.',
      z.strictObject({ data: z.array(z.strictObject({ name: z.string(), usage_count: z.int() })) }),
    ),
  },
};

export const handler = http('tags/suggestions', schemas, async ({ query }) => ({
  status: 200,
  body: { data: await Tags.suggest(query.q, query.limit) },
}));
