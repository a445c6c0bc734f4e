/** POST /api/v1/chats/{chatId}/requests: create an interactive request (contract §5.5.1). */
import { z } from 'zod';
import * as Requests from '../../core/requests.js';
import { http } from '../../middleware/http.js';
import { chatPath } from '../chats/path.js';
import { requestTrace } from './path.js';
import { LIMITS, boundedBytes, boundedChars, freeJson } from '../schemas.js';
import { CreateRequestBody } from './shapes.js';

export const schemas = {
  path: chatPath,
  // Types and values are rule checks made after the chat's existence (§5.5.1), not schema checks.
  body: z.object({
    type: z.unknown().optional(),
    // Sizes are bounded here (README "Limits"); types and values remain the core's rules.
    title: boundedChars('title', LIMITS.requestTitleChars).optional(),
    body: boundedBytes('body', LIMITS.requestTextBytes).optional(),
    config: freeJson('config').optional(),
    trace: requestTrace,
  }),
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: CreateRequestBody };

export const handler = http(
  'requests/create',
  schemas,
  async ({ path, body }) => ({
    status: 201,
    body: await Requests.create(path.chatId, body),
  }),
  { committedReply: { status: 201 } },
);
