/** GET /api/v1/media/{mediaId}: media metadata (contract §5.6.3). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { Media as MediaRecord } from '../../model/resources.js';
import { mediaPath } from './path.js';

export const schemas = { path: mediaPath, replies: { 200: json('The media record.', MediaRecord) } };

export const handler = http('media/get', schemas, async ({ path }) => ({
  status: 200,
  body: await Media.get(path.mediaId),
}));
