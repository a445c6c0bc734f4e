/** DELETE /api/v1/media/{mediaId}: delete unattached media, answering the record as it was (contract §5.6.4). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { failure, json } from '../../model/replies.js';
import { Media as MediaRecord } from '../../model/resources.js';
import { mediaPath } from './path.js';

export const schemas = {
  path: mediaPath,
  replies: {
    200: json('The media record as it was before deletion.', MediaRecord),
    409: failure('CONFLICT: the media is attached to a message.'),
  },
};

export const handler = http('media/delete', schemas, async ({ path, deadline }) => ({
  status: 200,
  body: await Media.remove(path.mediaId, deadline),
}));
