/** POST /api/v1/messages/{messageId}/chunks and its chat-scoped form: append a chunk (§5.4.3). */
import * as z from '../../platform/zod.js';
import * as Streaming from '../../core/streaming.js';
import { FieldRuleError } from '../../errors.js';
import { http } from '../../middleware/http.js';
import { json, tooLarge } from '../../model/replies.js';
import { Message } from '../../model/resources.js';
import { messagePath } from './path.js';

export const schemas = {
  path: messagePath,
  // deltaText is checked as a rule (its own message, §5.4.3), not as a schema type.
  body: z.object({ deltaText: z.optional(z.unknown()) }),
  replies: { 200: json('The streaming message with the chunk appended.', Message), 413: tooLarge('deltaText') },
};

/** The body as the contract defines it, for the OpenAPI document. */
export const documented = { body: z.object({ deltaText: z.string().check(z.minLength(1)) }) };

export const handler = http(
  'messages/chunk',
  schemas,
  async ({ path, body, config, keyed, deadline }) => {
    const { deltaText } = body;
    if (typeof deltaText !== 'string' || deltaText === '') {
      throw new FieldRuleError('deltaText', 'deltaText must be a non-empty string.');
    }
    const message = await Streaming.appendChunk(config, path.messageId, deltaText, path.chatId, deadline, keyed);
    return { status: 200, body: message };
  },
  // A keyed chunk's reply is stored with the chunk (core/streaming.ts appendChunk).
  { committedReply: { status: 200 } },
);
