/** POST /api/v1/messages/{messageId}/cancel and its chat-scoped form (§5.4.5). No body. */
import * as Streaming from '../../core/streaming.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Message } from '../../model/resources.js';
import { messagePath } from './path.js';

export const schemas = { path: messagePath, replies: { 200: json('The cancelled message.', Message) } };

export const handler = http(
  'messages/cancel',
  schemas,
  async ({ path, config, keyed, deadline }) => ({
    status: 200,
    body: await Streaming.cancel(config, path.messageId, path.chatId, deadline, keyed),
  }),
  { committedReply: { status: 200 } },
);
