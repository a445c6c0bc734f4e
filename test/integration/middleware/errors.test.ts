import { afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { newChat, useApi } from '../../support/api.js';

const api = useApi({ config: { server: { corsOrigins: ['https://app.example.com'] } } });

const NOT_FOUND = { error: { code: 'NOT_FOUND', message: 'Not found.', details: null } };

describe('routing and the error envelope', () => {
  it.each([
    ['GET', '/api/v1/nope'],
    ['GET', '/api/v2/chats'],
    ['DELETE', '/api/v1/chats'],
    ['PUT', '/api/v1/chats/AAAAAAAAAAAAAAAAAAAAA'],
    ['POST', '/api/v1/health'],
    ['GET', '/api/v1/Chats'],
  ])('%s %s answers the JSON 404 envelope', async (method, path) => {
    const res = await api.request(method, path);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it.each([
    ['GET', '/api/v1/chats/%E0%A4%A'],
    ['POST', '/api/v1/chats/%/archive'],
    ['GET', '/api/v1/messages/%ED%A0%80/x'],
    ['PATCH', '/api/v1/requests/%ZZ'],
    ['GET', '/api/v1/media/%C0%AF'],
  ])('%s %s (no valid percent-encoding) is a 4xx in the envelope, never a 500', async (method, path) => {
    const res = await api.request(method, path, method === 'GET' ? undefined : {});
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'details', 'message']);
  });

  it('matches literal segments before parameters and accepts a trailing slash', async () => {
    expect((await api.get('/api/v1/chats/unread-summary')).body).toHaveProperty('total_unread');
    expect((await api.get('/api/v1/chats/pending-summary')).body).toHaveProperty('pending_requests_total');
    expect((await api.get('/api/v1/health/')).status).toBe(200);
  });

  describe('an unexpected failure', () => {
    const name = 'inject-fault';
    afterEach(() => {
      ddb().middlewareStack.remove(name);
    });

    it('is a 500 INTERNAL_ERROR that leaks nothing, and the write leaves no trace', async () => {
      const before = (await api.get('/api/v1/chats')).body.data.length;
      ddb().middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'TransactWriteItemsCommand') {
            throw new Error('simulated failure: arn:aws:secret internal detail at /var/task/index.js:1');
          }
          return next(args);
        },
        { step: 'initialize', name },
      );
      const res = await api.post('/api/v1/chats', newChat({ title: 'doomed' }), {
        headers: { 'idempotency-key': 'k-500', origin: 'https://app.example.com' },
      });
      expect(res.status).toBe(500);
      expect(res.body).toEqual({
        error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null },
      });
      expect(res.text).not.toMatch(/simulated|arn:|\/var\/task|stack/i);
      // CORS still decorates error replies.
      expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      ddb().middlewareStack.remove(name);
      expect((await api.get('/api/v1/chats')).body.data.length).toBe(before);
      // The failed attempt released its idempotency key: the retry executes.
      const retry = await api.post('/api/v1/chats', newChat({ title: 'doomed' }), {
        headers: { 'idempotency-key': 'k-500' },
      });
      expect(retry.status).toBe(201);
    });

    it('a throttled read is retried by the SDK and the request still succeeds', async () => {
      let throttled = 0;
      const { ProvisionedThroughputExceededException } = await import('@aws-sdk/client-dynamodb');
      ddb().middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'QueryCommand' && throttled < 2) {
            throttled++;
            throw new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: {} });
          }
          return next(args);
        },
        { step: 'finalizeRequest', name },
      );
      const res = await api.get('/api/v1/chats');
      expect(res.status).toBe(200);
      expect(throttled).toBe(2);
    });
  });
});

describe('CORS (§1.13)', () => {
  it('answers preflight with 204 and the allowed methods and headers, without auth', async () => {
    const res = await api.request('OPTIONS', '/api/v1/chats/anything/at/all', undefined, {
      headers: { origin: 'https://app.example.com' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,PATCH,DELETE,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'Authorization,Content-Type,Idempotency-Key,X-Instance-Secret',
    );
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('echoes only listed origins, still processing the request, and sends nothing without Origin', async () => {
    const other = await api.get('/api/v1/health', { headers: { origin: 'https://evil.example.com' } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect((await api.get('/api/v1/health')).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('echoes any origin when the list is empty', async () => {
    api.setConfig({});
    try {
      const res = await api.get('/api/v1/health', { headers: { origin: 'http://localhost:5173' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    } finally {
      api.setConfig({ server: { corsOrigins: ['https://app.example.com'] } });
    }
  });
});
