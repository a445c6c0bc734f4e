/** GET /api/v1/requests: every chat's requests, for an approvals view (contract §5.5.6, this project's extension). */
import * as z from '../../platform/zod.js';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { queryInt } from '../../middleware/validate.js';
import { json, page } from '../../model/replies.js';
import { Request } from '../../model/resources.js';

export const schemas = {
  query: z.object({
    status: z._default(z.enum(['pending', 'resolved', 'cancelled', 'all']), 'pending'),
    limit: queryInt(1, 200, 50),
    cursor: z.optional(z.string()),
  }),
  replies: {
    200: json(
      'A page of requests: pending ones with a deadline first (soonest first), then those without ' +
        '(oldest first); closed ones newest closing first (§5.5.6).',
      page(Request),
    ),
  },
};

export const handler = http('requests/all', schemas, async ({ query }) => ({
  status: 200,
  body: await Requests.listAll(query.status, query.limit, query.cursor),
}));
