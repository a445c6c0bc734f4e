/**
 * POST /api/v1/chats/{chatId}/media/uploads/{uploadId}/complete: verifies the file an upload
 * session stored (size, type, image decode), makes its thumbnail and creates the medium, as
 * the direct upload does (answers 201 with the Media; again for a repeated call).
 */
import * as z from '../../platform/zod.js';
import * as Uploads from '../../core/media-upload.js';
import { http } from '../../middleware/http.js';
import { env } from '../../platform/env.js';
import { preloadImages } from '../../platform/images.js';

export const schemas = { path: z.object({ chatId: z.string(), uploadId: z.string() }) };

export const handler = http('media/finalize', schemas, async ({ path, config }) => ({
  status: 201,
  body: await Uploads.finalize(config, path.chatId, path.uploadId),
}));

// On Lambda, start the image library (WebAssembly, about 0.5 s) during the function's init
// rather than in its first request; locally it loads on first use.
if (env().AWS_LAMBDA_FUNCTION_NAME) await preloadImages();
