/** GET /api/v1/config: the live configuration without secrets (contract §2.11, §5.2.1). */
import { publicConfig } from '../../core/instance-config.js';
import { http } from '../../middleware/http.js';
import { json } from '../../model/replies.js';
import { PROVIDER_IDS } from '../../model/rename-providers.js';
import * as z from '../../platform/zod.js';

const ConfigResponse = z
  .looseObject({
    appName: z.string(),
    maxUploadBytes: z.int(),
    allowedMimeTypes: z.array(z.string()),
    /** This project's extension: what one upload request carries (larger files go through an upload session). */
    directUploadMaxBytes: z.optional(z.int()),
    titleMaxChars: z.int(),
    defaultModelIdForNewChats: z.optional(z.string()),
    agents: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        avatarUrl: z.optional(z.string()),
        defaultModelId: z.optional(z.string()),
      }),
    ),
    models: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        metadata: z.optional(z.record(z.string(), z.string())),
      }),
    ),
    push: z.strictObject({
      enabled: z.boolean(),
      vapidPublicKey: z.nullable(z.string()),
      subject: z.nullable(z.string()),
    }),
    security: z.looseObject({
      instanceSecretEnabled: z.boolean(),
      readEndpointsRequireInstanceSecret: z.boolean(),
      /** This project's extension: the deployment sets the secret, so the API cannot change it. */
      secretSetByDeployment: z.optional(z.literal(true)),
    }),
    server: z.looseObject({
      publicBaseUrl: z.nullable(z.string()),
      port: z.int(),
      dispatch: z.record(z.string(), z.unknown()),
    }),
    hooks: z.array(
      z.looseObject({
        url: z.string(),
        events: z.array(z.string()),
        timeoutMs: z.int(),
        maxRetries: z.int(),
        /** This project's extension: whether a signing secret and headers are stored, never what. */
        hasSigningSecret: z.optional(z.boolean()),
        hasHeaders: z.optional(z.boolean()),
      }),
    ),
    autoRename: z.nullable(
      z.looseObject({ enabled: z.boolean(), provider: z.string(), modelId: z.string(), hasApiKey: z.boolean() }),
    ),
    autoRenameProviders: z.array(
      z.looseObject({
        id: z.enum(PROVIDER_IDS),
        name: z.string(),
        envVar: z.string(),
        hasEnvKey: z.boolean(),
        cheapModels: z.array(z.looseObject({ id: z.string(), label: z.string() })),
      }),
    ),
  })
  .check(z.meta({ id: 'Config', description: 'The public configuration, secrets left out (contract §2.11).' }));

export const schemas = { replies: { 200: json('The public configuration.', ConfigResponse) } };

export const handler = http('config/get', schemas, async ({ config }) => ({
  status: 200,
  body: publicConfig(config),
}));
