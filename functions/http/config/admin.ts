/** PATCH /api/v1/config/admin: change the configuration at runtime (contract §5.2.2, §12.3). */
import * as z from '../../platform/zod.js';
import * as InstanceConfig from '../../core/instance-config.js';
import { http } from '../../middleware/http.js';
import { json, Ok } from '../../model/replies.js';

/**
 * Each field's meaning and the whole document's validation are §5.2.2's; unknown fields are
 * dropped here, so they are neither applied nor part of an Idempotency-Key's fingerprint (§1.10).
 * `defaultModelIdForNewChats`, `push` and `hooks` are this project's extension (docs/divergences.md
 * "Settings without rawConfig"): the settings screen changes them without resending the stored secrets.
 */
export const schemas = {
  body: z.object({
    rawConfig: z.optional(z.unknown()),
    agents: z.optional(z.array(z.unknown())),
    models: z.optional(z.array(z.unknown())),
    security: z.optional(z.record(z.string(), z.unknown())),
    autoRename: z.optional(z.nullable(z.record(z.string(), z.unknown()))),
    defaultModelIdForNewChats: z.optional(z.nullable(z.string())),
    // The VAPID key pair is the service's own (§7.7): only these two are taken.
    push: z.optional(z.object({ enabled: z.optional(z.boolean()), subject: z.optional(z.string()) })),
    hooks: z.optional(z.array(z.unknown())),
  }),
  replies: { 200: json('The configuration was changed (§5.2.2).', Ok) },
};

export const handler = http('config/admin', schemas, async ({ body }) => ({
  status: 200,
  body: await InstanceConfig.updateAdminConfig(body),
}));
