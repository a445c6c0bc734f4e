/** POST /api/v1/dispatch/claim-many: lease up to `limit` batches (contract §5.11.2, §4.4.7). */
import * as z from '../../platform/zod.js';
import { claim } from '../../core/dispatch/claim.js';
import { http } from '../../middleware/http.js';
import { json, noContent } from '../../model/replies.js';
import { DispatchBatch } from './batch.js';
import { nonNegativeInt, workerId } from './schemas.js';

export const schemas = {
  body: z.object({
    workerId,
    leaseMs: z.optional(nonNegativeInt),
    waitMs: z.optional(nonNegativeInt),
    limit: z.optional(z.number().check(z.int(), z.gte(1))),
  }),
  replies: {
    200: json('The claimed batches.', z.strictObject({ batches: z.array(DispatchBatch) })),
    204: noContent('Nothing was claimable within waitMs.'),
  },
};

export const handler = http('dispatch/claim-many', schemas, async ({ body, config, clientGone }) => {
  const configured = config.server.dispatch.claim.claimManyLimit;
  const max = Math.max(1, Math.min(body.limit ?? configured, Math.min(50, configured)));
  const batches = await claim(config, { ...body, clientGone }, max);
  return batches.length > 0 ? { status: 200, body: { batches } } : { status: 204, remember: false };
});
