/** POST /api/v1/dispatch/claim: lease one batch, long-polling up to waitMs (contract §5.11.1). */
import * as z from '../../platform/zod.js';
import { claim } from '../../core/dispatch/claim.js';
import { http } from '../../middleware/http.js';
import { json, noContent } from '../../model/replies.js';
import { DispatchBatch } from './batch.js';
import { nonNegativeInt, workerId } from './schemas.js';

export const schemas = {
  body: z.object({ workerId, leaseMs: z.optional(nonNegativeInt), waitMs: z.optional(nonNegativeInt) }),
  replies: { 200: json('A claimed batch.', DispatchBatch), 204: noContent('Nothing was claimable within waitMs.') },
};

export const handler = http('dispatch/claim', schemas, async ({ body, config, clientGone }) => {
  const [batch] = await claim(config, { ...body, clientGone }, 1);
  return batch ? { status: 200, body: batch } : { status: 204, remember: false };
});
