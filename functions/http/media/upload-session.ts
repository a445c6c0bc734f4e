/**
 * POST /api/v1/chats/{chatId}/media/uploads: opens an upload session for a file larger than
 * one request carries (up to `maxUploadBytes`): the upload's checks on what is declared, then
 * a presigned POST to storage (on the page's own origin for the web app: docs/architecture.md "Large files").
 * Not an OpenGram route; docs/architecture.md "Large files" has the flow.
 */
import * as z from '../../platform/zod.js';
import * as Uploads from '../../core/media-upload.js';
import { ownOrigin } from '../../middleware/auth.js';
import { http } from '../../middleware/http.js';
import { json, uploadRefused } from '../../model/replies.js';
import { chatPath } from '../chats/path.js';
import { id, timestamp } from '../../model.js';

const UploadSession = z.strictObject({
  uploadId: id,
  url: z.string(),
  fields: z.record(z.string(), z.string()),
  expiresAt: timestamp,
  maxUploadBytes: z.int(),
});

export const schemas = {
  path: chatPath,
  body: z.object({
    fileName: z.string({ error: 'fileName is required.' }).check(z.trim(), z.minLength(1, 'fileName is required.')),
    contentType: z.string({ error: 'contentType is required.' }),
    byteSize: z
      .number({ error: 'byteSize must be a positive integer.' })
      .check(z.int('byteSize must be a positive integer.'), z.gte(1, 'byteSize must be a positive integer.')),
    kind: z.optional(z.string()),
    messageId: z.optional(z.string()),
  }),
  replies: {
    201: json('A presigned POST for the file (docs/architecture.md "Large files").', UploadSession),
    ...uploadRefused,
  },
};

export const handler = http('media/upload-session', schemas, async ({ path, body, config, event }) => ({
  status: 201,
  body: await Uploads.openSession(config, path.chatId, body, await ownOrigin(event, config)),
}));
