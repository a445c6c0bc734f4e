/** PATCH /api/v1/requests/{requestId}: update title, body, config or trace (contract §5.5.3). */
import { z } from 'zod';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { requestPath, requestTrace } from './path.js';
import { UpdateRequestBody } from './shapes.js';

export const schemas = {
  path: requestPath,
  body: z.object({
    title: z.unknown().optional(),
    body: z.unknown().optional(),
    config: z.unknown().optional(),
    trace: requestTrace,
  }),
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: UpdateRequestBody };

export const handler = http('requests/update', schemas, async ({ path, body }) => ({
  status: 200,
  body: await Requests.update(path.requestId, body),
}));
