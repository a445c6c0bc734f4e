/** POST /api/v1/chats/{chatId}/messages: create a message (contract §5.4.1). */
import { z } from 'zod';
import * as Messages from '../../core/messages.js';
import { http } from '../../middleware/http.js';
import { chatPath } from '../chats/path.js';
import { freeObject } from '../schemas.js';

export const schemas = {
  path: chatPath,
  body: z.object({
    role: z.enum(['user', 'agent', 'system', 'tool'], { error: 'role must be one of user, agent, system, tool.' }),
    senderId: z.string().optional(),
    agentId: z.string().optional(),
    content: z.string({ error: 'content must be a string.' }).optional(),
    streaming: z.boolean({ error: 'streaming must be a boolean.' }).optional(),
    stream: z.boolean({ error: 'stream must be a boolean.' }).optional(),
    modelId: z.string({ error: 'modelId must be a string.' }).optional(),
    // Kept exactly as sent (no copy), bounded and checked storable (README "Limits").
    trace: freeObject('trace', 'trace must be a JSON object.').optional(),
  }),
};

export const handler = http(
  'messages/create',
  schemas,
  async ({ path, body, config }) => {
    const message = await Messages.create(config, path.chatId, body);
    return { status: 201, body: message };
  },
  { committedReply: { status: 201 } },
);
