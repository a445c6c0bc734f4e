/** POST /api/v1/requests/{requestId}/resolve: resolve a pending request (contract §5.5.4). */
import * as z from '../../platform/zod.js';
import * as Requests from '../../core/requests.js';
import { actorOf } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Request } from '../../model/resources.js';
import { requestPath } from './path.js';
import { LIMITS } from '../../limits.js';
import { boundedBytes, freeJson } from '../schemas.js';
import { ResolveRequestBody } from './shapes.js';
import type { RequestRecord } from '../../model.js';

export const schemas = {
  path: requestPath,
  // Payload checks depend on the request's type and run after the status check (§5.5.4).
  body: z.object({
    // Sizes are bounded here (docs/architecture.md "Limits"): the resolution is stored with the request.
    selectedOptionIds: z.optional(freeJson('selectedOptionIds')),
    text: z.optional(boundedBytes('text', LIMITS.requestTextBytes)),
    values: z.optional(freeJson('values')),
    resolvedBy: z.optional(z.unknown()),
  }),
  replies: { 200: json('The resolved request.', Request) },
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: ResolveRequestBody };

export const handler = http(
  'requests/resolve',
  schemas,
  async ({ path, body, event, config, keyed, deadline }) => {
    const request = await Requests.resolve(config, path.requestId, body, actorOf(event, config), deadline, keyed);
    return { status: 200, body: request };
  },
  {
    committedReply: { status: 200 },
    afterReplay: ({ config, reply, deadline }) => Requests.redoAfterResolve(config, reply as RequestRecord, deadline),
  },
);
