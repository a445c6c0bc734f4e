/** PATCH /api/v1/chats/{chatId}: update a chat (contract §5.3.4). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/chat-updates.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Chat } from '../../model/resources.js';
import { chatPath } from './path.js';

export const schemas = {
  path: chatPath,
  body: z.object({
    title: z.optional(z.string()),
    titleAutoRenamed: z.optional(z.boolean()),
    tags: z.optional(z.array(z.string())),
    pinned: z.optional(z.boolean()),
    modelId: z.optional(z.string()),
    notificationsMuted: z.optional(z.boolean()),
  }),
  replies: { 200: json('The updated chat.', Chat) },
};

export const handler = http(
  'chats/update',
  schemas,
  async ({ path, body, config, keyed, deadline }) => ({
    status: 200,
    body: await Chats.update(config, path.chatId, body, deadline, keyed),
  }),
  { committedReply: { status: 200 } },
);
