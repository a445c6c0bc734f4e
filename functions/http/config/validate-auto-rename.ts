/** POST /api/v1/config/admin/validate-auto-rename: a one-token test call to a provider (contract §5.2.3). */
import * as z from '../../platform/zod.js';
import * as AutoRename from '../../core/auto-rename.js';
import { http } from '../../middleware/http.js';
import { json, Ok } from '../../model/replies.js';
import { PROVIDER_IDS } from '../../model/rename-providers.js';

export const schemas = {
  body: z.object({
    provider: z.string(),
    modelId: z.string(),
    apiKey: z.optional(z.string()),
  }),
  replies: { 200: json('The provider accepted the model (§5.2.3).', Ok) },
};

/** For the OpenAPI document: the providers the rule accepts (any other string answers 400 "Unknown provider"). */
export const documented = { body: z.extend(schemas.body, { provider: z.enum(PROVIDER_IDS) }) };

export const handler = http('config/validate-auto-rename', schemas, async ({ body, config }) => ({
  status: 200,
  body: await AutoRename.validateSettings(body, config),
}));
