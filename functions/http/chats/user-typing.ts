/** POST /api/v1/chats/{chatId}/user-typing: user typing indicator, ephemeral (§5.3.9). No body. */
import * as Chats from '../../core/typing.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';
import { chatPath } from './path.js';

export const schemas = { path: chatPath, replies: { 204: noContent('The typing event was emitted.') } };

export const handler = http('chats/user-typing', schemas, async ({ path, config, deadline }) => {
  await Chats.userTyping(config, path.chatId, deadline);
  return { status: 204 };
});
