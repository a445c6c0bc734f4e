/** POST /api/v1/chats/{chatId}/typing: agent typing indicator, ephemeral (§5.3.8). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/typing.js';
import { http } from '../../middleware/http.js';
import { noContent } from '../../model/replies.js';
import { chatPath } from './path.js';
import { clientId } from '../schemas.js';

export const schemas = {
  path: chatPath,
  body: z.object({ agentId: clientId('agentId') }),
  replies: { 204: noContent('The typing event was emitted.') },
};

export const handler = http('chats/typing', schemas, async ({ path, body, deadline }) => {
  await Chats.agentTyping(path.chatId, body.agentId, deadline);
  return { status: 204 };
});
