/**
 * POST /api/v1/messages/{messageId}/complete and its chat-scoped form (§5.4.4). The body is
 * optional and read whatever its content type; `finalText`, when present, must be a string.
 */
import * as z from '../../platform/zod.js';
import * as Streaming from '../../core/streaming.js';
import { FieldRuleError } from '../../errors.js';
import { http } from '../../middleware/http.js';
import { json, tooLarge } from '../../model/replies.js';
import { Message } from '../../model/resources.js';
import { messagePath } from './path.js';

export const schemas = {
  path: messagePath,
  body: z.object({ finalText: z.optional(z.unknown()) }),
  optionalObjectBody: true,
  malformedJsonMessage: 'Invalid JSON body.',
  replies: { 200: json('The completed message.', Message), 413: tooLarge('finalText') },
};

/** The body as the contract defines it (optional, any content type), for the OpenAPI document. */
export const documented = { body: z.object({ finalText: z.optional(z.string()) }) };

export const handler = http(
  'messages/complete',
  schemas,
  async ({ path, body, config, keyed, deadline }) => {
    const { finalText } = body;
    if (finalText !== undefined && typeof finalText !== 'string') {
      throw new FieldRuleError('finalText', 'finalText must be a string.');
    }
    const message = await Streaming.complete(config, path.messageId, finalText, path.chatId, deadline, keyed);
    return { status: 200, body: message };
  },
  { committedReply: { status: 200 } },
);
