import { describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { useApi } from '../../support/api.js';

const api = useApi({
  config: {
    security: { instanceSecretEnabled: true, instanceSecret: 'sekrit', readEndpointsRequireInstanceSecret: true },
  },
  // No configuration cache: any route that reads the stored configuration reads it on every
  // request, so one that did would meet the frozen table below.
  env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '1', CONFIG_CACHE_MS: '0' },
});

const HEALTH = { service: 'opengram', status: 'ok', version: expect.any(String), uptime: expect.any(Number) };

describe('GET /api/v1/health', () => {
  it('answers without the secret, even when reads require it, and is never rate-limited', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await api.get('/api/v1/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(HEALTH);
      expect(Number.isInteger(res.body.uptime) && res.body.uptime >= 0).toBe(true);
    }
  });

  it('answers 200 while DynamoDB does not answer at all, with no storage call (§5.1: no other errors)', async () => {
    await whileDynamoFrozen(async () => {
      const res = await api.get('/api/v1/health', { headers: { origin: 'https://ui.example' } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(HEALTH);
      // CORS still applies (§1.13), from the configuration the container knows.
      expect(res.headers.get('access-control-allow-origin')).toBe('https://ui.example');
    });
  }, 40_000);
});

describe('the catch-all route (preflight, unknown routes)', () => {
  it('answers a preflight with the allow-list in force, an administrator change included (§1.13)', async () => {
    const preflight = (origin: string) => api.request('OPTIONS', '/api/v1/chats', undefined, { headers: { origin } });
    expect((await preflight('https://ui.example')).headers.get('access-control-allow-origin')).toBe(
      'https://ui.example',
    );
    const changed = await api.patch(
      '/api/v1/config/admin',
      { rawConfig: { server: { corsOrigins: ['https://admin.example'] }, security: { instanceSecretEnabled: false } } },
      { headers: { authorization: 'Bearer sekrit' } },
    );
    expect(changed.status).toBe(200);
    try {
      const allowed = await preflight('https://admin.example');
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://admin.example');
      const other = await preflight('https://ui.example');
      expect(other.status).toBe(204);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await api.patch('/api/v1/config/admin', {
        rawConfig: {
          security: { instanceSecretEnabled: true, instanceSecret: 'sekrit', readEndpointsRequireInstanceSecret: true },
        },
      });
    }
    const unknown = await api.get('/api/v1/nowhere');
    expect([unknown.status, unknown.body.error?.code]).toEqual([404, 'NOT_FOUND']);
  });
});

/** Runs `f` while every DynamoDB call of the runtime hangs, as a frozen table would (released after). */
async function whileDynamoFrozen(f: () => Promise<void>): Promise<void> {
  let release!: () => void;
  const frozen = new Promise<void>((r) => (release = r));
  ddb().middlewareStack.add(
    (next) => async (args) => {
      await frozen;
      return next(args);
    },
    { step: 'initialize', name: 'frozen-dynamodb', priority: 'high' },
  );
  try {
    await f();
  } finally {
    release();
    ddb().middlewareStack.remove('frozen-dynamodb');
  }
}
