/** POST /api/v1/chats/{chatId}/mark-unread (contract §3.4, §5.3.6). No body; any body sent is ignored. */
import * as Chats from '../../core/chat-updates.js';
import { http } from '../../middleware/http.js';
import { json, Ok } from '../../model/replies.js';
import { chatPath } from './path.js';

export const schemas = { path: chatPath, replies: { 200: json('Marked unread.', Ok) } };

export const handler = http(
  'chats/mark-unread',
  schemas,
  async ({ path, keyed, deadline }) => {
    await Chats.markUnread(path.chatId, deadline, keyed);
    return { status: 200, body: { ok: true } };
  },
  { committedReply: { status: 200, body: { ok: true } } },
);
