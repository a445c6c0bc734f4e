/** The sanitized configuration for GET /config (contract §2.11): never a secret. */
import { CHEAP_MODELS, RENAME_PROVIDERS } from '../model/rename-providers.js';
import type { InstanceConfig } from '../platform/instance-config.js';

/**
 * The largest upload the platform takes in one request: a synchronous Lambda payload is
 * capped at 6 MB and API Gateway base64-encodes binary bodies (×4/3), leaving about 4.4 MB
 * of file after multipart overhead. Larger files, up to `maxUploadBytes`, go through an
 * upload session (presigned POST to storage, then finalize): `maxUploadBytes` is what the
 * deployment accepts (§13 item 1), `directUploadMaxBytes` what one request carries.
 */
export const PLATFORM_MAX_UPLOAD_BYTES = 4_194_304;

/**
 * `environment`: the provider API keys present (platform/env.ts providerKeys), for hasEnvKey.
 * `secretSetByDeployment` (platform/config.ts): reported as `security.secretSetByDeployment: true`,
 * this project's extension, so a settings screen does not offer a rotation that cannot take effect.
 */
export function publicConfig(
  config: InstanceConfig,
  environment: Record<string, string | undefined>,
  deployment: { secretSetByDeployment?: boolean } = {},
): Record<string, unknown> {
  const { server, security, push, autoRename } = config;
  return {
    appName: config.appName,
    maxUploadBytes: config.maxUploadBytes,
    directUploadMaxBytes: Math.min(config.maxUploadBytes, PLATFORM_MAX_UPLOAD_BYTES),
    allowedMimeTypes: config.allowedMimeTypes,
    titleMaxChars: config.titleMaxChars,
    ...(config.defaultModelIdForNewChats !== undefined
      ? { defaultModelIdForNewChats: config.defaultModelIdForNewChats }
      : {}),
    agents: config.agents,
    models: config.models,
    push: { enabled: push.enabled, vapidPublicKey: push.vapidPublicKey || null, subject: push.subject || null },
    security: {
      instanceSecretEnabled: security.instanceSecretEnabled,
      readEndpointsRequireInstanceSecret: security.readEndpointsRequireInstanceSecret,
      ...(deployment.secretSetByDeployment ? { secretSetByDeployment: true } : {}),
    },
    server: {
      publicBaseUrl: server.publicBaseUrl,
      port: server.port,
      streamTimeoutSeconds: server.streamTimeoutSeconds,
      idempotencyTtlSeconds: server.idempotencyTtlSeconds,
      dispatch: server.dispatch,
    },
    hooks: config.hooks.map((h) => ({
      url: h.url,
      events: h.events,
      timeoutMs: h.timeoutMs ?? 5000,
      maxRetries: h.maxRetries ?? 3,
      // This project's extension (README "Settings without rawConfig"): whether they are stored, never what.
      hasSigningSecret: Boolean(h.signingSecret),
      hasHeaders: Object.keys(h.headers ?? {}).length > 0,
    })),
    autoRename: autoRename
      ? {
          enabled: autoRename.enabled,
          provider: autoRename.provider,
          modelId: autoRename.modelId,
          hasApiKey: Boolean(autoRename.apiKey),
        }
      : null,
    autoRenameProviders: RENAME_PROVIDERS.map((p) => ({
      id: p.id,
      name: p.name,
      envVar: p.envVars[0],
      hasEnvKey: p.envVars.some((v) => Boolean(environment[v])),
      cheapModels: CHEAP_MODELS[p.id],
    })),
  };
}
