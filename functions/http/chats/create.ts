/** POST /api/v1/chats: create a chat (contract §5.3.1). */
import { z } from 'zod';
import * as Chats from '../../core/chats.js';
import { http } from '../../middleware/http.js';
import { LIMITS, clientId } from '../schemas.js';

export const schemas = {
  body: z.object({
    agentIds: z
      .array(clientId('agentIds'))
      .min(1)
      .max(LIMITS.agentIds, `agentIds must contain at most ${LIMITS.agentIds} ids.`),
    modelId: z.string(),
    title: z.string().optional(),
    tags: z.array(z.string()).optional(),
    firstMessage: z.string().optional(),
  }),
};

export const handler = http(
  'chats/create',
  schemas,
  async ({ body, config }) => {
    const chat = await Chats.create(config, body);
    return { status: 201, body: chat };
  },
  { committedReply: { status: 201 } },
);
