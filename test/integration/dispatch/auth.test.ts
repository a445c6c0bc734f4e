/**
 * Dispatch endpoints are write-class (contract §5.11, §1.11, §1.14): with the instance secret
 * enabled, every one of them needs it, before schema validation; with it, workers run as usual.
 */
import { describe, expect, it } from '@jest/globals';
import { configWith, dispatchApi } from './support.js';

const SECRET = 'og_dispatch-test-secret-0123456789abcdef';
const config = {
  ...configWith({ mode: 'sequential' }),
  security: { instanceSecretEnabled: true, instanceSecret: SECRET },
};

const { api } = dispatchApi(config, { drainAfterEach: false });

const auth = { headers: { authorization: `Bearer ${SECRET}` } };
const UNAUTHORIZED = { code: 'UNAUTHORIZED', message: 'Missing or invalid instance secret.', details: null };

describe('dispatch with the instance secret', () => {
  it('answers 401 without the secret on every dispatch endpoint, even for invalid bodies', async () => {
    const id = 'AAAAAAAAAAAAAAAAAAAAA';
    const calls: [string, unknown][] = [
      ['/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 0 }],
      ['/api/v1/dispatch/claim', {}],
      ['/api/v1/dispatch/claim-many', { workerId: 'w1', waitMs: 0 }],
      [`/api/v1/dispatch/${id}/heartbeat`, { workerId: 'w1' }],
      [`/api/v1/dispatch/${id}/complete`, { workerId: 'w1' }],
      [`/api/v1/dispatch/${id}/fail`, { workerId: 'w1', reason: 'x', retryable: false }],
      [`/api/v1/dispatch/${id}/fail`, {}],
    ];
    for (const [path, body] of calls) {
      for (const options of [{}, { headers: { authorization: 'Bearer wrong' } }]) {
        const res = await api.post(path, body, options);
        expect({ path, status: res.status, error: res.body?.error }).toEqual({
          path,
          status: 401,
          error: UNAUTHORIZED,
        });
      }
    }
  });

  it('runs the worker loop with the secret', async () => {
    const chat = (
      await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', firstMessage: 'secret work' }, auth)
    ).body;
    const claim = await api.post('/api/v1/dispatch/claim', { workerId: 'w1', waitMs: 2000 }, auth);
    expect(claim.status).toBe(200);
    expect(claim.body).toMatchObject({ chatId: chat.id, compiledContent: 'secret work' });
    // The token query parameter is accepted too.
    const hb = await api.post(`/api/v1/dispatch/${claim.body.batchId}/heartbeat?token=${encodeURIComponent(SECRET)}`, {
      workerId: 'w1',
    });
    expect(hb.status).toBe(204);
    expect((await api.post(`/api/v1/dispatch/${claim.body.batchId}/complete`, { workerId: 'w1' }, auth)).status).toBe(
      204,
    );
    expect((await api.post('/api/v1/dispatch/claim-many', { workerId: 'w1', waitMs: 0 }, auth)).status).toBe(204);
  });
});
