/** GET /api/v1/decisions: the decision log, ascending by seq (contract §5.5.6, this project's extension). */
import * as z from '../../platform/zod.js';
import * as Decisions from '../../core/decisions.js';
import { http } from '../../middleware/http.js';
import { queryInt } from '../../middleware/validate.js';
import { json } from '../../model/replies.js';
import { DecisionEntry } from '../../model/resources.js';

export const schemas = {
  query: z.object({
    after: queryInt(0, Number.MAX_SAFE_INTEGER, 0),
    limit: queryInt(1, 500, 100),
  }),
  replies: {
    200: json(
      "Entries after `after`, ascending; `next` is the last one's seq, or null when none follow.",
      z.strictObject({ data: z.array(DecisionEntry), next: z.nullable(z.int()) }),
    ),
  },
};

export const handler = http('decisions/list', schemas, async ({ query }) => ({
  status: 200,
  body: await Decisions.list(query.after, query.limit),
}));
