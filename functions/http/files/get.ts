/** GET /api/v1/files/{mediaId}: the original bytes, whole or one byte range (contract §5.6.5). */
import * as Media from '../../core/media.js';
import { http } from '../../middleware/http.js';
import { header } from '../../middleware/types.js';
import { bytes, noContent, redirect } from '../../model/replies.js';
import { mediaPath } from '../media/path.js';

export const schemas = {
  path: mediaPath,
  replies: {
    // Served as the type it was stored with (normalized again), or application/octet-stream (§5.6.5).
    200: bytes('The original bytes.', '*/*'),
    206: bytes('The requested byte range.', '*/*'),
    307: redirect(
      'A file over 4 MiB, which the function does not answer inline (after the auth, existence and Range checks): ' +
        'the storage answers it, the Range included.',
      'A presigned URL of the same bytes, valid 5 minutes.',
    ),
    416: noContent('The range starts beyond the file: `Content-Range: bytes */<size>`, no body.'),
  },
};

export const handler = http('files/get', schemas, async ({ path, event }) => {
  const file = await Media.download(path.mediaId, header(event, 'range'));
  return file.body
    ? { status: file.status, headers: file.headers, binary: file.body }
    : { status: file.status, headers: file.headers };
});
