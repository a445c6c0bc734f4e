/**
 * Who closed a request, as the decision log records it (contract §5.5.6): `secret` for a holder of
 * the instance secret (a Bearer header or `token=`), `session` for a browser session cookie, with
 * the instance secret on (`open` is decisions.test.ts's, where it is off).
 */
import { describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { config as requestsConfig } from './support.js';

const SECRET = 'og_actors-test-secret-0123456789abcdef';
const api = useApi({
  config: {
    ...requestsConfig,
    security: { instanceSecretEnabled: true, instanceSecret: SECRET, readEndpointsRequireInstanceSecret: true },
  },
});
const bearer = { authorization: `Bearer ${SECRET}` };

async function newRequest(): Promise<string> {
  const chat = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a' }, { headers: bearer });
  expect(chat.status).toBe(201);
  const request = await api.post(
    `/api/v1/chats/${chat.body.id}/requests`,
    { type: 'choice', title: 'Go?', config: { options: [{ id: 'go', label: 'Go' }] } },
    { headers: bearer },
  );
  expect(request.status).toBe(201);
  return request.body.id;
}

describe('decision actors (§5.5.6)', () => {
  it('records secret (Bearer or token=) and session (cookie) closings as such', async () => {
    const signIn = await api.request('POST', '/api/v1/auth/session', { secret: SECRET });
    expect(signIn.status).toBe(204);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    const [byBearer, byToken, bySession, cancelledBySession] = [
      await newRequest(),
      await newRequest(),
      await newRequest(),
      await newRequest(),
    ];
    const answer = { selectedOptionIds: ['go'] };
    expect((await api.post(`/api/v1/requests/${byBearer}/resolve`, answer, { headers: bearer })).status).toBe(200);
    expect((await api.post(`/api/v1/requests/${byToken}/resolve?token=${SECRET}`, answer)).status).toBe(200);
    const session = { headers: { cookie, origin: api.url } };
    expect((await api.post(`/api/v1/requests/${bySession}/resolve`, answer, session)).status).toBe(200);
    expect((await api.post(`/api/v1/requests/${cancelledBySession}/cancel`, undefined, session)).status).toBe(200);

    const log = await api.get('/api/v1/decisions', { headers: bearer });
    expect(log.status).toBe(200);
    expect(log.body.data.map((e: any) => [e.request_id, e.action, e.actor])).toEqual([
      [byBearer, 'resolved', 'secret'],
      [byToken, 'resolved', 'secret'],
      [bySession, 'resolved', 'session'],
      [cancelledBySession, 'cancelled', 'session'],
    ]);
    // Reading the log is a read like any other: no credential, no log.
    expect((await api.get('/api/v1/decisions')).status).toBe(401);
    expect((await api.get('/api/v1/requests')).status).toBe(401);
  });
});
