/**
 * POST /api/v1/push/test (contract §5.10.3): one notification to every device, answered with
 * the delivery counts once every attempt has ended. The body is optional (a JSON object, possibly
 * `{}`); each of its four fields, when present, must be a string (400 naming the field, as the
 * reference's schema), and a blank one takes its default.
 */
import * as z from '../../platform/zod.js';
import * as Push from '../../core/push.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';

export const schemas = {
  body: z.object({
    title: z.optional(z.string()),
    body: z.optional(z.string()),
    chatId: z.optional(z.string()),
    url: z.optional(z.string()),
  }),
  optionalObjectBody: true,
  replies: {
    200: json(
      'Delivery counts.',
      z.strictObject({ ok: z.literal(true), sent: z.int(), failed: z.int(), removed: z.int() }),
    ),
  },
};

export const handler = http('push/test', schemas, async ({ body, config }) => ({
  status: 200,
  body: await Push.sendTest(body, config),
}));
