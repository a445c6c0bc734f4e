/** POST /api/v1/chats/{chatId}/messages/cancel-streaming: cancel every open stream of a chat (§5.4.6). */
import * as Streaming from '../../core/streaming.js';
import { http } from '../../middleware/http.js';
import { chatPath } from '../chats/path.js';

export const schemas = { path: chatPath };

export const handler = http('messages/cancel-streaming', schemas, async ({ path, config, deadline }) => ({
  status: 200,
  body: await Streaming.cancelAllStreaming(config, path.chatId, deadline),
}));
