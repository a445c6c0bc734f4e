/**
 * POST /chats without `modelId` (contract §5.3.1, since 2026-11): the chat's first agent's
 * `defaultModelId`, else `defaultModelIdForNewChats`, else the first configured model; the
 * Idempotency-Key fingerprint covers the body as sent (§1.10).
 */
import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';

const models = [
  { id: 'model-a', name: 'A', description: '' },
  { id: 'model-b', name: 'B', description: '' },
  { id: 'model-c', name: 'C', description: '' },
];
const agents = [
  { id: 'plain', name: 'Plain', description: '' },
  { id: 'coder', name: 'Coder', description: '', defaultModelId: 'model-c' },
];
// The configuration is read at every request (CONFIG_CACHE_MS 0): an administrator's change reaches
// the other functions within their cache period (5 s by default), and POST /chats is another
// function than PATCH /config/admin on a deployment.
const api = useApi({
  config: { agents, models, defaultModelIdForNewChats: 'model-b' },
  env: { CONFIG_CACHE_MS: '0' },
});

const create = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  api.post('/api/v1/chats', body, { headers });

describe('POST /api/v1/chats without modelId', () => {
  it('takes the first agent’s defaultModelId, then defaultModelIdForNewChats, for the chat and its first message', async () => {
    const coder = await create({ agentIds: ['coder', 'plain'], firstMessage: 'hi' });
    expect(coder.status).toBe(201);
    expect(coder.body.model_id).toBe('model-c');
    const messages = (await api.get(`/api/v1/chats/${coder.body.id}/messages`)).body.data;
    expect(messages.map((m: { model_id: string }) => m.model_id)).toEqual(['model-c']);
    // The first agent decides: a later agent's default is not looked at.
    const plain = await create({ agentIds: ['plain', 'coder'] });
    expect(plain.status).toBe(201);
    expect(plain.body.model_id).toBe('model-b');
    expect((await api.get(`/api/v1/chats/${plain.body.id}`)).body.model_id).toBe('model-b');
  });

  it('takes the first configured model when neither default is set', async () => {
    const patched = await api.patch('/api/v1/config/admin', { rawConfig: { agents, models: [...models].reverse() } });
    expect(patched.status).toBe(200);
    try {
      const res = await create({ agentIds: ['plain'] });
      expect(res.status).toBe(201);
      expect(res.body.model_id).toBe('model-c');
    } finally {
      await api.patch('/api/v1/config/admin', {
        rawConfig: { agents, models, defaultModelIdForNewChats: 'model-b' },
      });
    }
  });

  it('still checks a modelId that is sent, and refuses one that is not a string', async () => {
    const unknown = await create({ agentIds: ['coder'], modelId: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'modelId must match a configured model id.',
      details: { field: 'modelId' },
    });
    for (const modelId of [null, 5, ['model-a']]) {
      const res = await create({ agentIds: ['coder'], modelId });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fieldErrors).toHaveProperty('modelId');
    }
    expect((await create({ agentIds: ['coder'], modelId: 'model-a' })).body.model_id).toBe('model-a');
  });

  it('fingerprints the body as sent: a replay without modelId replays, the same key with the resolved modelId is a conflict', async () => {
    const key = { 'idempotency-key': 'k-default-model' };
    const first = await create({ agentIds: ['coder'], title: 'Idem' }, key);
    expect(first.status).toBe(201);
    const again = await create({ title: 'Idem', agentIds: ['coder'] }, key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const explicit = await create({ agentIds: ['coder'], title: 'Idem', modelId: 'model-c' }, key);
    expect(explicit.status).toBe(409);
    expect(explicit.body.error.message).toBe('Idempotency-Key already used with a different request payload.');
  });
});
