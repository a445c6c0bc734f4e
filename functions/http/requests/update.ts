/** PATCH /api/v1/requests/{requestId}: update title, body, config or trace (contract §5.5.3). */
import { z } from 'zod';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { requestPath, requestTrace } from './path.js';
import { LIMITS, boundedBytes, boundedChars, freeJson } from '../schemas.js';
import { UpdateRequestBody } from './shapes.js';

export const schemas = {
  path: requestPath,
  body: z.object({
    // Sizes are bounded here (README "Limits"); types and values remain the core's rules.
    title: boundedChars('title', LIMITS.requestTitleChars).optional(),
    body: boundedBytes('body', LIMITS.requestTextBytes).optional(),
    config: freeJson('config').optional(),
    trace: requestTrace,
  }),
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: UpdateRequestBody };

export const handler = http('requests/update', schemas, async ({ path, body }) => ({
  status: 200,
  body: await Requests.update(path.requestId, body),
}));
