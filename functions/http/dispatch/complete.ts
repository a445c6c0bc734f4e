/** POST /api/v1/dispatch/{batchId}/complete (contract §5.11.4). */
import * as z from '../../platform/zod.js';
import { complete } from '../../core/dispatch/settle.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';
import { batchPath, workerId } from './schemas.js';

export const schemas = {
  path: batchPath,
  body: z.object({ workerId }),
  replies: { 204: noContent('The batch is completed.') },
};

export const handler = http('dispatch/complete', schemas, async ({ path, body, config }) => {
  await complete(config, path.batchId, body.workerId);
  return { status: 204 };
});
