/**
 * POST /api/v1/chats/{chatId}/media/uploads: opens an upload session for a file larger than
 * one request carries (up to `maxUploadBytes`): the upload's checks on what is declared, then
 * a presigned POST to storage. Not an OpenGram route; README "Large files" has the flow.
 */
import { z } from 'zod';
import * as Uploads from '../../core/media-upload.js';
import { http } from '../../middleware/http.js';
import { chatPath } from '../chats/path.js';

export const schemas = {
  path: chatPath,
  body: z.object({
    fileName: z.string({ error: 'fileName is required.' }).trim().min(1, 'fileName is required.'),
    contentType: z.string({ error: 'contentType is required.' }),
    byteSize: z
      .number({ error: 'byteSize must be a positive integer.' })
      .int('byteSize must be a positive integer.')
      .min(1, 'byteSize must be a positive integer.'),
    kind: z.string().optional(),
    messageId: z.string().optional(),
  }),
};

export const handler = http('media/upload-session', schemas, async ({ path, body, config }) => ({
  status: 201,
  body: await Uploads.openSession(config, path.chatId, body),
}));
