/** GET /api/v1/chats/{chatId}/media: a chat's media, newest first (contract §5.6.1). */
import * as z from '../../platform/zod.js';
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { json, page } from '../../model/replies.js';
import { Media as MediaRecord } from '../../model/resources.js';
import { queryInt } from '../../middleware/validate.js';
import { chatPath } from '../chats/path.js';

export const schemas = {
  path: chatPath,
  query: z.object({
    kind: z.optional(z.enum(['image', 'audio', 'file'])),
    messageId: z.optional(z.string()),
    cursor: z.optional(z.string()),
    limit: queryInt(1, 100, 50),
  }),
  replies: { 200: json("A page of the chat's media, newest first.", page(MediaRecord)) },
};

export const handler = http('media/list', schemas, async ({ path, query }) => ({
  status: 200,
  body: await Media.list(path.chatId, query),
}));
