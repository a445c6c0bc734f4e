/** POST /api/v1/chats/{chatId}/requests: create an interactive request (contract §5.5.1). */
import * as z from '../../platform/zod.js';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Request } from '../../model/resources.js';
import { chatPath } from '../chats/path.js';
import { requestTrace } from './path.js';
import { LIMITS } from '../../limits.js';
import { boundedBytes, boundedChars, freeJson } from '../schemas.js';
import { CreateRequestBody } from './shapes.js';

export const schemas = {
  path: chatPath,
  // Types and values are rule checks made after the chat's existence (§5.5.1), not schema checks.
  body: z.object({
    type: z.optional(z.unknown()),
    // Sizes are bounded here (docs/architecture.md "Limits"); types and values remain the core's rules.
    title: z.optional(boundedChars('title', LIMITS.requestTitleChars)),
    body: z.optional(boundedBytes('body', LIMITS.requestTextBytes)),
    config: z.optional(freeJson('config')),
    trace: requestTrace,
    // A deadline's rules (§5.5.6) are checked by the core, after the rest; its size is bounded here.
    deadline: z.optional(freeJson('deadline')),
  }),
  replies: { 201: json('The new request.', Request) },
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: CreateRequestBody };

export const handler = http(
  'requests/create',
  schemas,
  async ({ path, body, keyed, deadline }) => ({
    status: 201,
    body: await Requests.create(path.chatId, body, deadline, keyed),
  }),
  { committedReply: { status: 201 } },
);
