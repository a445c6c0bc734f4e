/** POST /api/v1/chats/{chatId}/messages: create a message (contract §5.4.1). */
import * as z from '../../platform/zod.js';
import * as Messages from '../../core/messages.js';
import { http } from '../../middleware/http.js';
import { json, tooLarge } from '../../model/replies.js';
import { Message } from '../../model/resources.js';
import { chatPath } from '../chats/path.js';
import { freeObject } from '../schemas.js';
import type * as Model from '../../model.js';

export const schemas = {
  path: chatPath,
  body: z.object({
    role: z.enum(['user', 'agent', 'system', 'tool'], { error: 'role must be one of user, agent, system, tool.' }),
    senderId: z.optional(z.string()),
    agentId: z.optional(z.string()),
    content: z.optional(z.string({ error: 'content must be a string.' })),
    streaming: z.optional(z.boolean({ error: 'streaming must be a boolean.' })),
    stream: z.optional(z.boolean({ error: 'stream must be a boolean.' })),
    modelId: z.optional(z.string({ error: 'modelId must be a string.' })),
    // Kept exactly as sent (no copy), bounded and checked storable (docs/architecture.md "Limits").
    trace: z.optional(freeObject('trace', 'trace must be a JSON object.')),
  }),
  replies: { 201: json('The new message.', Message), 413: tooLarge('content') },
};

export const handler = http(
  'messages/create',
  schemas,
  async ({ path, body, config, keyed, deadline }) => {
    const message = await Messages.create(config, path.chatId, body, deadline, keyed);
    return { status: 201, body: message };
  },
  {
    committedReply: { status: 201 },
    afterReplay: ({ path, config, reply, deadline }) =>
      Messages.redoAfterCreate(config, path.chatId, reply as Model.Message, deadline),
  },
);
