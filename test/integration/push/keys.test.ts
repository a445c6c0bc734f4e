/**
 * VAPID keys in the local runtime (contract §7.7): made once, kept in their file (mode 0600)
 * and reused after a restart, so subscriptions keep working; the public key is what GET
 * /config shows and what every push is signed with; the private key appears in no response
 * and no log line.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reloadEnvForTests } from '../../../functions/platform/env.js';
import { useApi } from '../../support/api.js';
import { newDevice, recordPushes, vapidOf } from './support.js';
import type { Recorder } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-relay-vapid-'));
const keysFile = join(dir, 'vapid-keys.json');
const config = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
let pushes: Recorder;
const logged: string[] = [];
const write = process.stdout.write.bind(process.stdout);
const api = useApi(() => {
  pushes = recordPushes();
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string') logged.push(chunk);
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  return { config, vapidKeysFile: keysFile, env: { POWERTOOLS_LOG_LEVEL: 'DEBUG' } };
});
afterAll(() => {
  process.stdout.write = write;
  rmSync(dir, { recursive: true, force: true });
});

describe('VAPID keys', () => {
  it('are made once on the first start, kept owner-only, and shown (public half only) by GET /config', async () => {
    const stored = JSON.parse(readFileSync(keysFile, 'utf8')) as { publicKey: string; privateKey: string };
    expect(statSync(keysFile).mode & 0o777).toBe(0o600);
    expect(Buffer.from(stored.publicKey, 'base64url')).toHaveLength(65);
    expect(Buffer.from(stored.publicKey, 'base64url')[0]).toBe(0x04);
    expect(Buffer.from(stored.privateKey, 'base64url')).toHaveLength(32);
    const res = await api.get('/api/v1/config');
    expect(res.body.push).toEqual({
      enabled: true,
      vapidPublicKey: stored.publicKey,
      subject: 'mailto:ops@example.com',
    });
    expect(res.text).not.toContain(stored.privateKey);
  });

  it('sign every push and are reused after a restart; the private key is never logged', async () => {
    const stored = JSON.parse(readFileSync(keysFile, 'utf8')) as { publicKey: string; privateKey: string };
    const device = newDevice();
    await api.post('/api/v1/push/subscribe', { endpoint: device.endpoint, keys: device.keys });
    expect((await api.post('/api/v1/push/test', {})).body).toMatchObject({ sent: 1 });
    expect(vapidOf(pushes.requests[0]!).publicKey).toBe(stored.publicKey);

    // A second runtime on the same file (as npm start after a restart) keeps the pair. A new
    // process reads its environment afresh, and this one gets buckets of its own.
    const { startLocalApi } = await import('../../../local/server.js');
    reloadEnvForTests();
    const second = await startLocalApi(0, {
      dispatch: false,
      streamTimers: false,
      vapidKeysFile: keysFile,
      s3Upstream: process.env.TEST_S3_ENDPOINT,
    });
    try {
      const config2 = (await (await fetch(`${second.url}/api/v1/config`)).json()) as {
        push: { vapidPublicKey: string };
      };
      expect(config2.push.vapidPublicKey).toBe(stored.publicKey);
      pushes.reset();
      const test = await fetch(`${second.url}/api/v1/push/test`, { method: 'POST' });
      expect(await test.json()).toMatchObject({ sent: 1 });
      expect(vapidOf(pushes.requests[0]!).publicKey).toBe(stored.publicKey);
    } finally {
      await second.close();
    }
    expect(JSON.parse(readFileSync(keysFile, 'utf8'))).toEqual(stored);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.join('')).not.toContain(stored.privateKey);
  });
});
