/**
 * Path parameters of the message routes. The streaming operations are served at two paths
 * with identical behavior (§5.4.3–5.4.5): `/messages/{messageId}/…` (reference) and
 * `/chats/{chatId}/messages/{messageId}/…` (seed), whose chatId adds the ownership checks.
 */
import * as z from '../../platform/zod.js';

export const messagePath = z.object({ messageId: z.string(), chatId: z.optional(z.string()) });
