/** POST /api/v1/chats/{chatId}/messages/cancel-streaming: cancel every open stream of a chat (§5.4.6). */
import * as z from '../../platform/zod.js';
import * as Streaming from '../../core/streaming.js';
import { http } from '../../middleware/http.js';
import { id } from '../../model.js';
import { json } from '../../model/replies.js';
import { chatPath } from '../chats/path.js';

export const schemas = {
  path: chatPath,
  replies: { 200: json('The messages that were cancelled.', z.strictObject({ cancelledMessageIds: z.array(id) })) },
};

export const handler = http('messages/cancel-streaming', schemas, async ({ path, config, deadline }) => ({
  status: 200,
  body: await Streaming.cancelAllStreaming(config, path.chatId, deadline),
}));
