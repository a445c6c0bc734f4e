/** GET /api/v1/files/{mediaId}/thumbnail: the WebP thumbnail of an image (contract §5.6.6). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { bytes } from '../../model/replies.js';
import { mediaPath } from '../media/path.js';

export const schemas = { path: mediaPath, replies: { 200: bytes('The WebP thumbnail.', 'image/webp') } };

export const handler = http('files/thumbnail', schemas, async ({ path }) => {
  const file = await Media.thumbnail(path.mediaId);
  return { status: file.status, headers: file.headers, binary: file.body };
});
