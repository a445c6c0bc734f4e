import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';

const api = useApi();

describe('GET /api/v1/config', () => {
  it('reports the defaults, with the effective upload limit and the complete dispatch settings', async () => {
    const res = await api.get('/api/v1/config');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      appName: 'OpenGram',
      allowedMimeTypes: ['*/*'],
      titleMaxChars: 48,
      agents: [
        {
          id: 'agent-default',
          name: 'Default Agent',
          description: 'Default local development agent.',
          defaultModelId: 'model-default',
        },
      ],
      models: [{ id: 'model-default', name: 'Default Model', description: 'Default local development model.' }],
      push: { enabled: false, vapidPublicKey: null, subject: null },
      security: { instanceSecretEnabled: false, readEndpointsRequireInstanceSecret: false },
      server: {
        publicBaseUrl: 'http://localhost:3000',
        port: 3000,
        streamTimeoutSeconds: 60,
        idempotencyTtlSeconds: 86400,
        dispatch: {
          mode: 'batched_sequential',
          batchDebounceMs: 600,
          typingGraceMs: 2000,
          maxBatchWaitMs: 30000,
          schedulerTickMs: 500,
          leaseMs: 30000,
          heartbeatIntervalMs: 5000,
          claimWaitMs: 10000,
          retryBaseMs: 500,
          retryMaxMs: 30000,
          maxAttempts: 8,
          execution: { autoscaleEnabled: true, minConcurrency: 2, maxConcurrency: 10, scaleCooldownMs: 5000 },
          claim: { claimManyLimit: 10 },
        },
      },
      hooks: [],
      autoRename: null,
    });
    // Up to the configured 50 MB through upload sessions; what one request carries, directly.
    expect([res.body.maxUploadBytes, res.body.directUploadMaxBytes]).toEqual([50_000_000, 4_194_304]);
    expect(res.body).not.toHaveProperty('defaultModelIdForNewChats');
    expect(res.body.autoRenameProviders.map((p: { id: string }) => p.id)).toEqual([
      'anthropic',
      'openai',
      'google',
      'xai',
      'openrouter',
    ]);
    expect(res.body.autoRenameProviders[2]).toMatchObject({
      id: 'google',
      name: 'Google Gemini',
      envVar: 'GEMINI_API_KEY',
      hasEnvKey: false,
    });
  });

  it('never exposes a secret, and reflects configuration changes immediately', async () => {
    api.setConfig({
      defaultModelIdForNewChats: 'model-default',
      security: {
        instanceSecretEnabled: true,
        instanceSecret: 'top-secret-value',
        readEndpointsRequireInstanceSecret: false,
      },
      hooks: [
        {
          url: 'https://example.com/hook',
          events: ['chat.created'],
          signingSecret: 'hook-secret-value',
          headers: { 'x-api-key': 'hdr-secret' },
        },
      ],
      autoRename: { enabled: true, provider: 'anthropic', modelId: 'claude-haiku-4-5', apiKey: 'rename-secret-value' },
    });
    try {
      const res = await api.get('/api/v1/config');
      expect(res.status).toBe(200);
      for (const secret of ['top-secret-value', 'hook-secret-value', 'hdr-secret', 'rename-secret-value'])
        expect(res.text).not.toContain(secret);
      expect(res.body.defaultModelIdForNewChats).toBe('model-default');
      expect(res.body.security).toEqual({ instanceSecretEnabled: true, readEndpointsRequireInstanceSecret: false });
      expect(res.body.hooks).toEqual([
        {
          url: 'https://example.com/hook',
          events: ['chat.created'],
          timeoutMs: 5000,
          maxRetries: 3,
          hasSigningSecret: true,
          hasHeaders: true,
        },
      ]);
      expect(res.body.autoRename).toEqual({
        enabled: true,
        provider: 'anthropic',
        modelId: 'claude-haiku-4-5',
        hasApiKey: true,
      });
    } finally {
      api.setConfig({});
    }
  });
  it('says when the deployment sets the instance secret (a stored one would never take effect)', async () => {
    expect((await api.get('/api/v1/config')).body.security).toEqual({
      instanceSecretEnabled: false,
      readEndpointsRequireInstanceSecret: false,
    });
    api.setEnv({ OPENGRAM_INSTANCE_SECRET: 'og_deployment-secret-0123456789abcdef' });
    try {
      const res = await api.get('/api/v1/config');
      expect(res.body.security).toEqual({
        instanceSecretEnabled: true,
        readEndpointsRequireInstanceSecret: false,
        secretSetByDeployment: true,
      });
      expect(res.text).not.toContain('og_deployment-secret');
    } finally {
      api.setEnv({ OPENGRAM_INSTANCE_SECRET: undefined });
    }
  });
});
