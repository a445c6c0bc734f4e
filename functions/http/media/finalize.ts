/**
 * POST /api/v1/chats/{chatId}/media/uploads/{uploadId}/complete: verifies the file an upload
 * session stored (size, type, image decode), makes its thumbnail and creates the medium, as
 * the direct upload does (answers 201 with the Media; again for a repeated call).
 */
import * as z from '../../platform/zod.js';
import * as Uploads from '../../core/media-upload.js';
import { http } from '../../middleware/http.js';
import { json, uploadRefused } from '../../model/replies.js';
import { Media } from '../../model/resources.js';

export const schemas = {
  path: z.object({ chatId: z.string(), uploadId: z.string() }),
  replies: { 201: json('The stored media.', Media), ...uploadRefused },
};

export const handler = http('media/finalize', schemas, async ({ path, config, deadline }) => ({
  status: 201,
  body: await Uploads.finalize(config, path.chatId, path.uploadId, deadline),
}));
