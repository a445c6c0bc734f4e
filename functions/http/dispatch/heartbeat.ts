/** POST /api/v1/dispatch/{batchId}/heartbeat: extend a lease (contract §5.11.3). */
import * as z from '../../platform/zod.js';
import { heartbeat } from '../../core/dispatch/settle.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';
import { batchPath, nonNegativeInt, workerId } from './schemas.js';

export const schemas = {
  path: batchPath,
  body: z.object({ workerId, extendMs: z.optional(nonNegativeInt) }),
  replies: { 204: noContent('The lease was extended.') },
};

export const handler = http('dispatch/heartbeat', schemas, async ({ path, body, config }) => {
  await heartbeat(config, path.batchId, body.workerId, body.extendMs);
  return { status: 204 };
});
