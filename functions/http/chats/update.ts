/** PATCH /api/v1/chats/{chatId}: update a chat (contract §5.3.4). */
import { z } from 'zod';
import * as Chats from '../../core/chats.js';
import { http } from '../../middleware/http.js';
import { chatPath } from './path.js';

export const schemas = {
  path: chatPath,
  body: z.object({
    title: z.string().optional(),
    titleAutoRenamed: z.boolean().optional(),
    tags: z.array(z.string()).optional(),
    pinned: z.boolean().optional(),
    modelId: z.string().optional(),
    notificationsMuted: z.boolean().optional(),
  }),
};

export const handler = http(
  'chats/update',
  schemas,
  async ({ path, body, config }) => ({
    status: 200,
    body: await Chats.update(config, path.chatId, body),
  }),
  { committedReply: { status: 200 } },
);
