/** PATCH /api/v1/requests/{requestId}: update title, body, config or trace (contract §5.5.3). */
import * as z from '../../platform/zod.js';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Request } from '../../model/resources.js';
import { requestPath, requestTrace } from './path.js';
import { LIMITS } from '../../limits.js';
import { boundedBytes, boundedChars, freeJson } from '../schemas.js';
import { UpdateRequestBody } from './shapes.js';

export const schemas = {
  path: requestPath,
  body: z.object({
    // Sizes are bounded here (docs/architecture.md "Limits"); types and values remain the core's rules.
    title: z.optional(boundedChars('title', LIMITS.requestTitleChars)),
    body: z.optional(boundedBytes('body', LIMITS.requestTextBytes)),
    config: z.optional(freeJson('config')),
    trace: requestTrace,
    // A deadline's rules (§5.5.6) are checked by the core, after the rest; its size is bounded here.
    deadline: z.optional(freeJson('deadline')),
  }),
  replies: { 200: json('The updated request.', Request) },
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: UpdateRequestBody };

export const handler = http('requests/update', schemas, async ({ path, body, deadline }) => ({
  status: 200,
  body: await Requests.update(path.requestId, body, deadline),
}));
