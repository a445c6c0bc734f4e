/** The `{chatId}` path parameter shared by the chat routes. Any string; unknown ids are 404. */
import * as z from '../../platform/zod.js';

export const chatPath = z.object({ chatId: z.string() });
