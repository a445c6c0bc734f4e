/** GET /api/v1/chats/{chatId} (contract §5.3.3). */
import * as Chats from '../../core/chat-reads.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Chat } from '../../model/resources.js';
import { chatPath } from './path.js';

export const schemas = { path: chatPath, replies: { 200: json('The chat.', Chat) } };

export const handler = http('chats/get', schemas, async ({ path }) => ({
  status: 200,
  body: await Chats.get(path.chatId),
}));
