/** GET /api/v1/media/{mediaId}: media metadata (contract §5.6.3). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { mediaPath } from './path.js';

export const schemas = { path: mediaPath };

export const handler = http('media/get', schemas, async ({ path }) => ({
  status: 200,
  body: await Media.get(path.mediaId),
}));
