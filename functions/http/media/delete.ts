/** DELETE /api/v1/media/{mediaId}: delete unattached media, answering the record as it was (contract §5.6.4). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { mediaPath } from './path.js';

export const schemas = { path: mediaPath };

export const handler = http('media/delete', schemas, async ({ path, deadline }) => ({
  status: 200,
  body: await Media.remove(path.mediaId, deadline),
}));
