/** POST /api/v1/chats: create a chat (contract §5.3.1). */
import * as z from '../../platform/zod.js';
import * as Chats from '../../core/chat-create.js';
import { http } from '../../middleware/http.js';
import { json, tooLarge } from '../../model/replies.js';
import { Chat } from '../../model/resources.js';
import { LIMITS } from '../../limits.js';
import { clientId } from '../schemas.js';
import type * as Model from '../../model.js';

export const schemas = {
  body: z.object({
    agentIds: z
      .array(clientId('agentIds'))
      .check(z.minLength(1), z.maxLength(LIMITS.agentIds, `agentIds must contain at most ${LIMITS.agentIds} ids.`)),
    modelId: z.optional(z.string()),
    title: z.optional(z.string()),
    tags: z.optional(z.array(z.string())),
    firstMessage: z.optional(z.string()),
  }),
  replies: { 201: json('The new chat.', Chat), 413: tooLarge('firstMessage') },
};

export const handler = http(
  'chats/create',
  schemas,
  async ({ body, config, keyed, deadline }) => {
    const chat = await Chats.create(config, body, deadline, keyed);
    return { status: 201, body: chat };
  },
  {
    committedReply: { status: 201 },
    afterReplay: ({ body, config, reply, deadline }) =>
      Chats.redoAfterCreate(config, reply as Model.Chat, body, deadline),
  },
);
