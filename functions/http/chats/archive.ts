/** POST /api/v1/chats/{chatId}/archive (contract §4.1, §5.3.5). No body; any body sent is ignored. */
import * as Chats from '../../core/chat-updates.js';
import { http } from '../../middleware/http.js';
import { json, Ok } from '../../model/replies.js';
import { chatPath } from './path.js';

export const schemas = { path: chatPath, replies: { 200: json('Archived.', Ok) } };

export const handler = http(
  'chats/archive',
  schemas,
  async ({ path, keyed, deadline }) => {
    await Chats.setArchived(path.chatId, true, deadline, keyed);
    return { status: 200, body: { ok: true } };
  },
  { committedReply: { status: 200, body: { ok: true } } },
);
