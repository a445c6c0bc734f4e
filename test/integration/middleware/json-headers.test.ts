/**
 * Issue 33 item 7: every JSON answer of the API, errors included, carries
 * `X-Content-Type-Options: nosniff` and `Cache-Control: no-store` (functions/middleware/types.ts
 * jsonResult, the one place every reply and error envelope is made), while the event stream and
 * file downloads keep their own headers.
 */
import { describe, expect, it } from '@jest/globals';
import { oneAgentConfig, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';

const SECRET = 'json-headers-secret';
const api = useApi({
  config: {
    ...oneAgentConfig,
    security: { instanceSecretEnabled: true, instanceSecret: SECRET, readEndpointsRequireInstanceSecret: true },
  },
});
const auth = { headers: { authorization: `Bearer ${SECRET}` } };

const headersOf = (res: Response) => ({
  'x-content-type-options': res.headers.get('x-content-type-options'),
  'cache-control': res.headers.get('cache-control'),
});
const JSON_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };

describe('headers of JSON answers (issue 33 item 7)', () => {
  it('are on successes and on every kind of error', async () => {
    const chat = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, auth);
    expect(chat.status).toBe(201);
    const cases: [label: string, res: Response, status: number][] = [
      ['health (public)', await api.get('/api/v1/health'), 200],
      ['created', chat, 201],
      ['chat list', await api.get('/api/v1/chats', auth), 200],
      ['the OpenAPI document', await api.get('/api/v1/doc'), 200],
      ['no content', await api.post(`/api/v1/chats/${chat.body.id}/typing`, { agentId: 'assistant' }, auth), 204],
      ['401 without the secret', await api.get('/api/v1/chats'), 401],
      ['401 with a wrong secret', await api.get('/api/v1/config', { headers: { authorization: 'Bearer nope' } }), 401],
      ['400 schema error', await api.get('/api/v1/chats?limit=1000', auth), 400],
      [
        '400 malformed JSON',
        await api.post('/api/v1/chats', undefined, { ...auth, raw: '{', contentType: 'application/json' }),
        400,
      ],
      ['404 unknown chat', await api.get('/api/v1/chats/V1StGXR8_Z5jdHi6B-myT', auth), 404],
      ['404 unknown route', await api.get('/api/v1/no-such-route', auth), 404],
    ];
    for (const [label, res, status] of cases) {
      expect([label, res.status, headersOf(res)]).toEqual([label, status, JSON_HEADERS]);
    }
  });

  it('leave the event stream and a file download their own headers', async () => {
    const stream = await fetch(`${api.url}/api/v1/events/stream`, auth);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-cache, no-transform');
    await stream.body?.cancel();

    const chat = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, auth);
    const upload = await api.post(
      `/api/v1/chats/${chat.body.id}/media`,
      { fileName: 'note.txt', contentType: 'text/plain', base64Data: Buffer.from('hello').toString('base64') },
      auth,
    );
    expect(upload.status).toBe(201);
    const file = await fetch(`${api.url}/api/v1/files/${upload.body.id}`, auth);
    expect([file.status, await file.text()]).toEqual([200, 'hello']);
    expect(file.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(file.headers.get('cache-control')).not.toBe('no-store');
  });
});
