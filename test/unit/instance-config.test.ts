import { describe, expect, it } from '@jest/globals';
import {
  ConfigValidationError,
  defaultConfig,
  normalizeOrigin,
  resolveConfig,
} from '../../functions/platform/instance-config.js';

const invalid = (raw: unknown, overrides = {}) => {
  try {
    resolveConfig(raw, overrides);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigValidationError);
    return (error as Error).message;
  }
  throw new Error('expected a validation error');
};

describe('instance configuration (§12)', () => {
  it('fills every default and merges nested objects key by key', () => {
    const config = resolveConfig({
      server: { dispatch: { leaseMs: 1234, execution: { minConcurrency: 3 } } },
      titleMaxChars: 20,
    });
    const defaults = defaultConfig();
    expect(config.titleMaxChars).toBe(20);
    expect(config.server.dispatch.leaseMs).toBe(1234);
    expect(config.server.dispatch.execution).toEqual({ ...defaults.server.dispatch.execution, minConcurrency: 3 });
    expect(config.server.dispatch.claim).toEqual(defaults.server.dispatch.claim);
    expect(config.server.idempotencyTtlSeconds).toBe(86400);
    expect(config.autoRename).toBeNull();
  });

  it('replaces arrays wholesale and keeps unknown keys', () => {
    const config = resolveConfig({
      models: [{ id: 'm', name: 'M', description: '' }],
      agents: [{ id: 'a', name: 'A', description: '' }],
      extra: { x: 1 },
    });
    expect(config.models).toEqual([{ id: 'm', name: 'M', description: '' }]);
    expect(config.extra).toEqual({ x: 1 });
  });

  it('keeps unknown keys in nested objects and hands out a fresh default document each time', () => {
    const config = resolveConfig({
      push: { note: 'n' },
      server: { dispatch: { execution: { hint: 1 } } },
      hooks: [{ url: 'https://h', events: [], tag: 't' }],
    });
    expect(config.push).toMatchObject({ note: 'n', enabled: false });
    expect(config.server.dispatch.execution).toMatchObject({ hint: 1, minConcurrency: 2 });
    expect(config.hooks[0]).toEqual({ url: 'https://h', events: [], tag: 't' });
    expect('defaultModelIdForNewChats' in defaultConfig()).toBe(false);
    const first = defaultConfig();
    first.agents[0]!.name = 'changed';
    first.allowedMimeTypes.push('image/png');
    expect(defaultConfig().agents[0]!.name).toBe('Default Agent');
    expect(defaultConfig().allowedMimeTypes).toEqual(['*/*']);
    expect(resolveConfig(undefined)).toEqual(defaultConfig());
    expect(resolveConfig(null)).toEqual(defaultConfig());
  });

  it(
    'reports the first broken rule: shape before rules, rules in §12.3 order, a bad port override first of ' + 'all',
    () => {
      const broken = {
        models: [],
        titleMaxChars: 0,
        server: { dispatch: { execution: { minConcurrency: 5, maxConcurrency: 2 } } },
      };
      expect(invalid(broken)).toBe('Config validation error: titleMaxChars: Too small: expected number to be >=1');
      expect(invalid({ ...broken, titleMaxChars: 10 })).toBe(
        'Config validation error: at least one model is required.',
      );
      expect(
        invalid({ server: { corsOrigins: ['x'], dispatch: { execution: { minConcurrency: 5, maxConcurrency: 2 } } } }),
      ).toMatch(/corsOrigins entry "x" is not a valid URL/);
      expect(invalid(broken, { OPENGRAM_SERVER_PORT: 'abc' })).toMatch(/OPENGRAM_SERVER_PORT/);
      expect(invalid({ server: { port: 0 } })).toMatch(/^Config validation error: server\.port: /);
    },
  );

  it('applies the deployment overrides', () => {
    const config = resolveConfig(
      {},
      {
        OPENGRAM_INSTANCE_SECRET: 'sec',
        OPENGRAM_PUBLIC_BASE_URL: 'https://relay.example.com',
        OPENGRAM_CORS_ORIGINS: ' https://a.example.com , ,https://b.example.com:8443/ ',
        OPENGRAM_SERVER_PORT: '8080',
      },
    );
    expect(config.security).toMatchObject({ instanceSecret: 'sec', instanceSecretEnabled: true });
    expect(config.server.publicBaseUrl).toBe('https://relay.example.com');
    expect(config.server.corsOrigins).toEqual(['https://a.example.com', 'https://b.example.com:8443']);
    expect(config.server.port).toBe(8080);
    expect(
      resolveConfig({}, { OPENGRAM_INSTANCE_SECRET: '   ', OPENGRAM_CORS_ORIGINS: ' , ' }).security
        .instanceSecretEnabled,
    ).toBe(false);
  });

  it.each([
    [{ models: [] }, /at least one model/],
    [{ agents: [] }, /at least one agent/],
    [{ defaultModelIdForNewChats: 'ghost' }, /defaultModelIdForNewChats/],
    [{ agents: [{ id: 'a', name: 'A', description: '', defaultModelId: 'ghost' }] }, /defaultModelId/],
    [{ security: { instanceSecretEnabled: true } }, /instanceSecret/],
    [{ push: { enabled: true } }, /push.enabled requires/],
    [
      { push: { enabled: true, vapidPublicKey: 'p', vapidPrivateKey: 'k', subject: 'mailto:me@localhost' } },
      /localhost/,
    ],
    [{ server: { idempotencyTtlSeconds: 0 } }, /idempotencyTtlSeconds/],
    [{ server: { corsOrigins: ['https://a.example.com/path'] } }, /corsOrigins/],
    [{ server: { corsOrigins: ['ftp://a.example.com'] } }, /corsOrigins/],
    [{ server: { corsOrigins: ['https://*.example.com'] } }, /corsOrigins/],
    [{ server: { corsOrigins: [''] } }, /corsOrigins/],
    [{ server: { dispatch: { mode: 'fast' } } }, /mode/],
    [{ server: { dispatch: { maxAttempts: 0 } } }, /maxAttempts/],
    [{ server: { dispatch: { leaseMs: -1 } } }, /leaseMs/],
    [{ server: { dispatch: { execution: { minConcurrency: 5, maxConcurrency: 2 } } } }, /maxConcurrency/],
    [{ autoRename: { enabled: true, provider: 'acme', modelId: 'x' } }, /provider/],
    [{ autoRename: { enabled: true, provider: 'openai', modelId: ' ' } }, /modelId/],
    [[], /JSON object/],
  ])('rejects %j', (raw, message) => {
    const text = invalid(raw);
    expect(text).toMatch(/^Config validation error: /);
    expect(text).toMatch(message);
  });

  it('rejects a bad OPENGRAM_SERVER_PORT', () => {
    expect(invalid({}, { OPENGRAM_SERVER_PORT: '70000' })).toMatch(/OPENGRAM_SERVER_PORT/);
  });

  it('normalizes origins to their origin form and de-duplicates them', () => {
    expect(normalizeOrigin('HTTPS://App.Example.com/')).toBe('https://app.example.com');
    expect(
      resolveConfig({ server: { corsOrigins: ['https://a.example.com', 'https://a.example.com/'] } }).server
        .corsOrigins,
    ).toEqual(['https://a.example.com']);
  });
});
