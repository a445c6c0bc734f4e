import { afterAll, describe, expect, it } from '@jest/globals';
import { newChat, useApi } from '../../support/api.js';

const SECRET = 'og_test-secret-0123456789abcdefghij';
const UNAUTHORIZED = { error: { code: 'UNAUTHORIZED', message: 'Missing or invalid instance secret.', details: null } };
const withSecret = (readToggle: boolean) => ({
  security: { instanceSecretEnabled: true, instanceSecret: SECRET, readEndpointsRequireInstanceSecret: readToggle },
});

const api = useApi({ config: withSecret(false) });
afterAll(() => {
  delete process.env.OPENGRAM_INSTANCE_SECRET;
});

const bearer = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } });
const chatCount = async () => (await api.get('/api/v1/chats?limit=100', bearer(SECRET))).body.data.length as number;

describe('instance secret (§1.11)', () => {
  it('with the secret off, nothing requires it', async () => {
    api.setConfig({});
    try {
      expect((await api.post('/api/v1/chats', newChat())).status).toBe(201);
      expect((await api.get('/api/v1/chats')).status).toBe(200);
    } finally {
      api.setConfig(withSecret(false));
    }
  });

  it('writes require it; a missing or wrong secret is 401 and changes nothing', async () => {
    const before = await chatCount();
    const attempts = [
      {},
      bearer('wrong'),
      bearer(SECRET.slice(0, -1)),
      bearer(`${SECRET}x`),
      { headers: { authorization: `bearer ${SECRET}` } },
      { headers: { authorization: `Bearer  ${SECRET}` } },
      { headers: { authorization: SECRET } },
      { headers: { 'x-instance-secret': SECRET } },
    ];
    for (const options of attempts) {
      const res = await api.post('/api/v1/chats', newChat(), options);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    }
    const wrongToken = await api.post(`/api/v1/chats?token=nope`, newChat());
    expect(wrongToken.status).toBe(401);
    expect(await chatCount()).toBe(before);
  });

  it('accepts the bearer header or the token query on writes', async () => {
    expect((await api.post('/api/v1/chats', newChat(), bearer(SECRET))).status).toBe(201);
    expect((await api.post(`/api/v1/chats?token=${encodeURIComponent(SECRET)}`, newChat())).status).toBe(201);
  });

  it('reads are open while readEndpointsRequireInstanceSecret is false', async () => {
    expect((await api.get('/api/v1/chats')).status).toBe(200);
    expect((await api.get('/api/v1/config')).status).toBe(200);
    expect((await api.get('/api/v1/tags/suggestions?q=a')).status).toBe(200);
  });

  it('reads require it when the read toggle is on, by header or token query; health never does', async () => {
    api.setConfig(withSecret(true));
    try {
      for (const path of [
        '/api/v1/chats',
        '/api/v1/config',
        '/api/v1/chats/unread-summary',
        '/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA',
      ]) {
        const res = await api.get(path);
        expect([path, res.status]).toEqual([path, 401]);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      expect((await api.get('/api/v1/chats', bearer(SECRET))).status).toBe(200);
      expect((await api.get(`/api/v1/chats?token=${encodeURIComponent(SECRET)}`)).status).toBe(200);
      expect((await api.get('/api/v1/chats?token=wrong')).status).toBe(401);
      expect((await api.get('/api/v1/health')).status).toBe(200);
    } finally {
      api.setConfig(withSecret(false));
    }
  });

  it('checks the secret before validation: a bad body without the secret is 401, not 400', async () => {
    const res = await api.post('/api/v1/chats', { agentIds: 'nope' });
    expect(res.status).toBe(401);
  });

  it('OPENGRAM_INSTANCE_SECRET overrides the secret and forces it on', async () => {
    api.setConfig({});
    api.setEnv({ OPENGRAM_INSTANCE_SECRET: 'from-env-secret' });
    try {
      expect((await api.post('/api/v1/chats', newChat())).status).toBe(401);
      expect((await api.post('/api/v1/chats', newChat(), bearer('from-env-secret'))).status).toBe(201);
      expect((await api.get('/api/v1/config')).body.security.instanceSecretEnabled).toBe(true);
    } finally {
      api.setEnv({ OPENGRAM_INSTANCE_SECRET: undefined });
      api.setConfig(withSecret(false));
    }
  });
});
