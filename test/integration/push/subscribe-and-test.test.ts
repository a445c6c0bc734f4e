/**
 * Push endpoints (contract §5.10, §7.1, §7.5) through HTTP with push enabled: subscribe
 * (validation in contract order, upsert by endpoint keeping the id, under concurrency too),
 * unsubscribe, and the test endpoint's deliveries and counts, with every request recorded by
 * the test transport, decrypted with the device's keys and its headers and VAPID JWT checked.
 * The endpoint table itself is test/unit/push-endpoint.test.ts.
 */
import { beforeEach, describe, expect, it } from '@jest/globals';
import { useApi } from '../../support/api.js';
import { decrypt, newDevice, recordPushes, vapidOf } from './support.js';
import type { Device, Recorder } from './support.js';

const config = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
let pushes: Recorder;
const api = useApi(() => {
  pushes = recordPushes();
  return { config, env: { PUSH_TIMEOUT_MS: '300', PUSH_RETRY_BASE_MS: '20' } };
});
beforeEach(() => pushes.reset());

const subscribe = (device: Pick<Device, 'endpoint' | 'keys'>, headers: Record<string, string> = {}) =>
  api.post('/api/v1/push/subscribe', { endpoint: device.endpoint, keys: device.keys }, { headers });
const unsubscribe = (endpoint: unknown) => api.request('DELETE', '/api/v1/push/subscribe', { endpoint });
const sendTest = (body?: unknown) => api.post('/api/v1/push/test', body);

/** Removes every stored subscription (each test starts with none). */
async function forgetAll(devices: Device[]): Promise<void> {
  for (const d of devices) await unsubscribe(d.endpoint);
}

describe('POST /push/subscribe', () => {
  it('stores a device: 201 with its id and normalized endpoint', async () => {
    const device = newDevice('FCM.GoogleAPIs.com');
    const res = await subscribe(device);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[A-Za-z0-9_-]{21}$/), endpoint: expect.any(String) });
    expect(res.body.endpoint).toBe(new URL(device.endpoint).href);
    expect(res.body.endpoint.startsWith('https://fcm.googleapis.com/')).toBe(true);
    await forgetAll([device]);
  });

  it('keeps the id when the same endpoint subscribes again, and uses the new keys', async () => {
    const first = newDevice();
    const a = await subscribe(first);
    const renewed = { ...newDevice(), endpoint: first.endpoint };
    const b = await subscribe(renewed);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    const test = await sendTest({});
    expect(test.body).toEqual({ ok: true, sent: 1, failed: 0, removed: 0 });
    expect(pushes.requests).toHaveLength(1);
    expect(decrypt(renewed, pushes.requests[0]!).title).toBe('OpenGram');
    expect(() => decrypt(first, pushes.requests[0]!)).toThrow();
    await forgetAll([renewed]);
  });

  it('gives one id to 20 concurrent subscribes of one endpoint (one row)', async () => {
    const device = newDevice();
    const results = await Promise.all(Array.from({ length: 20 }, () => subscribe(device)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect((await sendTest()).body).toMatchObject({ sent: 1 });
    await forgetAll([device]);
  });

  it.each([
    [{}, 'endpoint is required.', 'endpoint'],
    [{ endpoint: '  ' }, 'endpoint is required.', 'endpoint'],
    [{ endpoint: 'not a url' }, 'endpoint must be a valid URL.', 'endpoint'],
    [{ endpoint: 'http://fcm.googleapis.com/x' }, 'endpoint must use HTTPS.', 'endpoint'],
    [{ endpoint: 'https://127.0.0.1/x' }, 'endpoint host is not allowed.', 'endpoint'],
    [
      { endpoint: 'https://fcm.googleapis.com.evil.example/x' },
      'endpoint host must be a supported Web Push provider.',
      'endpoint',
    ],
    [{ endpoint: 'https://fcm.googleapis.com/x' }, 'keys must be an object with p256dh and auth.', 'keys'],
    [{ endpoint: 'https://fcm.googleapis.com/x', keys: { auth: 'a' } }, 'keys.p256dh is required.', 'keys.p256dh'],
    [
      { endpoint: 'https://fcm.googleapis.com/x', keys: { p256dh: 'p', auth: ' ' } },
      'keys.auth is required.',
      'keys.auth',
    ],
  ])('refuses %j: 400 "%s"', async (body, message, field) => {
    const res = await api.post('/api/v1/push/subscribe', body);
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message, details: { field } });
  });

  it('refuses a body that is not a JSON object, and stores nothing on any refusal', async () => {
    const res = await api.post('/api/v1/push/subscribe', undefined, { raw: '[1]' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect((await sendTest()).body).toEqual({ ok: true, sent: 0, failed: 0, removed: 0 });
  });
});

describe('DELETE /push/subscribe', () => {
  it('answers { ok, removed } and validates the endpoint as subscribe does', async () => {
    const device = newDevice('web.push.apple.com');
    await subscribe(device);
    expect((await unsubscribe(device.endpoint)).body).toEqual({ ok: true, removed: true });
    expect((await unsubscribe(device.endpoint)).body).toEqual({ ok: true, removed: false });
    const refused = await unsubscribe('https://push.example.com/x');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'endpoint host must be a supported Web Push provider.',
      details: { field: 'endpoint' },
    });
  });
});

describe('POST /push/test', () => {
  it('sends the test notification to every device, encrypted for each, signed with VAPID', async () => {
    const devices = [newDevice(), newDevice('updates.push.services.mozilla.com'), newDevice('web.push.apple.com')];
    for (const d of devices) await subscribe(d);
    const res = await sendTest({ title: 'Hello', body: 'World', chatId: 'chat1', url: '/chats/chat1?x=1#m' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, sent: 3, failed: 0, removed: 0 });
    expect(pushes.requests).toHaveLength(3);
    const publicKey = (await api.get('/api/v1/config')).body.push.vapidPublicKey as string;
    for (const d of devices) {
      const [request] = pushes.to(d);
      expect(decrypt(d, request!)).toEqual({
        title: 'Hello',
        body: 'World',
        data: { chatId: 'chat1', type: 'test', url: '/chats/chat1?x=1#m' },
      });
      expect(request!.headers).toMatchObject({
        'content-encoding': 'aes128gcm',
        'content-type': 'application/octet-stream',
        ttl: '2419200',
        urgency: 'normal',
      });
      const vapid = vapidOf(request!);
      expect(vapid.publicKey).toBe(publicKey);
      expect(vapid.claims.aud).toBe(new URL(d.endpoint).origin);
      expect(vapid.claims.sub).toBe('mailto:ops@example.com');
      const hours = ((vapid.claims.exp as number) - Date.now() / 1000) / 3600;
      expect(hours).toBeGreaterThan(11.9);
      expect(hours).toBeLessThanOrEqual(12);
    }
    await forgetAll(devices);
  });

  it('fills the defaults and replaces a URL on another origin', async () => {
    const device = newDevice();
    await subscribe(device);
    await sendTest({ chatId: 'c9', url: '//evil.example/x' });
    expect(decrypt(device, pushes.requests[0]!)).toEqual({
      title: 'OpenGram',
      body: 'This is a test push notification.',
      data: { chatId: 'c9', type: 'test', url: '/chats/c9' },
    });
    await forgetAll([device]);
  });

  it(
    'counts sent, failed and removed: 404/410/401/403 remove the device, 500 and timeouts are retried and ' + 'kept',
    async () => {
      const byAnswer = new Map<number | string, Device>();
      for (const answer of [201, 404, 410, 401, 403, 500, 400, 'timeout', 'network']) {
        const d = newDevice();
        byAnswer.set(answer, d);
        await subscribe(d);
      }
      const answerOf = new Map([...byAnswer].map(([answer, d]) => [d.endpoint, answer]));
      pushes.answer = (request) => answerOf.get(request.endpoint) as number;
      const res = await sendTest();
      expect(res.body).toEqual({ ok: true, sent: 1, failed: 8, removed: 4 });
      // Retryable failures get 3 attempts each; everything else exactly one.
      const attempts = (answer: number | string) => pushes.to(byAnswer.get(answer)!).length;
      expect([500, 'timeout', 'network'].map(attempts)).toEqual([3, 3, 3]);
      expect([201, 404, 410, 401, 403, 400].map(attempts)).toEqual([1, 1, 1, 1, 1, 1]);
      // The removed devices are gone; the failed ones are kept.
      pushes.reset();
      expect((await sendTest()).body).toEqual({ ok: true, sent: 5, failed: 0, removed: 0 });
      await forgetAll([...byAnswer.values()]);
    },
  );

  it('refuses a field that is present but not a string with 400 naming it, and sends nothing', async () => {
    const device = newDevice();
    await subscribe(device);
    for (const field of ['title', 'body', 'chatId', 'url']) {
      for (const value of [5, null, true, ['x'], { a: 1 }]) {
        const res = await sendTest({ [field]: value });
        expect({ field, value, status: res.status, code: res.body.error?.code }).toEqual({
          field,
          value,
          status: 400,
          code: 'VALIDATION_ERROR',
        });
        expect(Object.keys(res.body.error.details.fieldErrors)).toEqual([field]);
      }
    }
    expect(pushes.requests).toHaveLength(0);
    // Unknown fields are still ignored.
    expect((await sendTest({ surprise: 5 })).body).toEqual({ ok: true, sent: 1, failed: 0, removed: 0 });
    await forgetAll([device]);
  });

  it('delivers after a retry when the service recovers (429, then 201)', async () => {
    const device = newDevice();
    await subscribe(device);
    pushes.answer = (_request, attempt) => (attempt === 1 ? 429 : 201);
    expect((await sendTest()).body).toEqual({ ok: true, sent: 1, failed: 0, removed: 0 });
    expect(pushes.to(device)).toHaveLength(2);
    await forgetAll([device]);
  });
});

describe('push disabled', () => {
  it(
    'answers 400 "Push notifications are disabled in config." on all three endpoints, after the body ' + 'checks',
    async () => {
      api.setConfig({ push: { enabled: false } });
      try {
        const device = newDevice();
        const disabled = {
          code: 'VALIDATION_ERROR',
          message: 'Push notifications are disabled in config.',
          details: null,
        };
        for (const res of [await subscribe(device), await unsubscribe(device.endpoint), await sendTest()]) {
          expect(res.status).toBe(400);
          expect(res.body.error).toEqual(disabled);
        }
        expect((await api.post('/api/v1/push/subscribe', {})).body.error.message).toBe('endpoint is required.');
        expect((await api.get('/api/v1/config')).body.push).toEqual({
          enabled: false,
          vapidPublicKey: null,
          subject: null,
        });
      } finally {
        api.setConfig(config);
      }
    },
  );
});
