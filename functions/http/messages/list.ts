/** GET /api/v1/chats/{chatId}/messages: a chat's messages, newest first (contract §5.4.2). */
import * as z from '../../platform/zod.js';
import * as Messages from '../../core/messages.js';
import { http } from '../../middleware/http.js';
import { json, page } from '../../model/replies.js';
import { Message } from '../../model/resources.js';
import { queryInt } from '../../middleware/validate.js';
import { chatPath } from '../chats/path.js';

export const schemas = {
  path: chatPath,
  query: z.object({ cursor: z.optional(z.string()), limit: queryInt(1, 200, 50) }),
  replies: { 200: json('A page of messages, newest first (§5.4.2).', page(Message)) },
};

export const handler = http('messages/list', schemas, async ({ path, query, config }) => ({
  status: 200,
  body: await Messages.list(config, path.chatId, query),
}));
