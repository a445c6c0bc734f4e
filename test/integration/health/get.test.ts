import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi } from '../../support/api.js';
import type { TestApi } from '../../support/api.js';

let api: TestApi;
beforeAll(async () => {
  api = await startApi({
    config: {
      security: { instanceSecretEnabled: true, instanceSecret: 'sekrit', readEndpointsRequireInstanceSecret: true },
    },
    env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '1' },
  });
});
afterAll(async () => api?.close());

describe('GET /api/v1/health', () => {
  it('answers without the secret, even when reads require it, and is never rate-limited', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await api.get('/api/v1/health');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        service: 'opengram',
        status: 'ok',
        version: expect.any(String),
        uptime: expect.any(Number),
      });
      expect(Number.isInteger(res.body.uptime) && res.body.uptime >= 0).toBe(true);
    }
  });
});
