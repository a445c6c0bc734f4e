/** The `{chatId}` path parameter shared by the chat routes. Any string; unknown ids are 404. */
import * as z from '../../platform/zod.js';
import { asInput } from '../mini-input.js';

export const chatPath = asInput(z.object({ chatId: z.string() }));
