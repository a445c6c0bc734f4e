/** POST /api/v1/dispatch/{batchId}/fail: retry later or fail for good (contract §5.11.5, §4.4.6). */
import * as z from '../../platform/zod.js';
import { fail } from '../../core/dispatch/settle.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';
import { batchPath, nonNegativeInt, workerId } from './schemas.js';
import { LIMITS } from '../../limits.js';

export const schemas = {
  path: batchPath,
  body: z.object({
    workerId,
    reason: z
      .string({ error: 'reason is required.' })
      .check(
        z.trim(),
        z.minLength(1, 'reason is required.'),
        z.maxLength(LIMITS.reasonChars, `reason must be at most ${LIMITS.reasonChars} characters.`),
      ),
    retryable: z.boolean(),
    retryDelayMs: z.optional(nonNegativeInt),
  }),
  replies: { 204: noContent('The failure was recorded.') },
};

export const handler = http('dispatch/fail', schemas, async ({ path, body, config, deadline }) => {
  await fail(config, path.batchId, body, deadline);
  return { status: 204 };
});
