/** POST /api/v1/config/admin/validate-auto-rename: a one-token test call to a provider (contract §5.2.3). */
import { z } from 'zod';
import * as AutoRename from '../../core/auto-rename.js';
import { http } from '../../middleware/http.js';

export const schemas = {
  body: z.object({
    provider: z.string(),
    modelId: z.string(),
    apiKey: z.string().optional(),
  }),
};

export const handler = http('config/validate-auto-rename', schemas, async ({ body, config }) => ({
  status: 200,
  body: await AutoRename.validateSettings(body, config),
}));
