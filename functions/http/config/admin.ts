/** PATCH /api/v1/config/admin: change the configuration at runtime (contract §5.2.2, §12.3). */
import { z } from 'zod';
import * as LiveConfig from '../../core/live-config.js';
import { http } from '../../middleware/http.js';

/** Each field's meaning and the whole document's validation are §5.2.2's; unknown fields are ignored. */
export const schemas = {
  body: z.looseObject({
    rawConfig: z.unknown().optional(),
    agents: z.array(z.unknown()).optional(),
    models: z.array(z.unknown()).optional(),
    security: z.record(z.string(), z.unknown()).optional(),
    autoRename: z.record(z.string(), z.unknown()).nullable().optional(),
  }),
};

export const handler = http('config/admin', schemas, async ({ body }) => ({
  status: 200,
  body: await LiveConfig.updateAdminConfig(body),
}));
