/** GET /api/v1/files/{mediaId}: the original bytes, whole or one byte range (contract §5.6.5). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { header } from '../../middleware/types.js';
import { mediaPath } from '../media/path.js';

export const schemas = { path: mediaPath };

export const handler = http('files/get', schemas, async ({ path, event }) => {
  const file = await Media.download(path.mediaId, header(event, 'range'));
  return { status: file.status, headers: file.headers, binary: file.body };
});
