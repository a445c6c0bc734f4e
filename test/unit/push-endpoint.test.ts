/**
 * Push subscription endpoint rules (contract §7.1, §5.10.1): what is accepted (normalized) and
 * what is refused with which message, address notations included.
 */
import { describe, expect, it } from '@jest/globals';
import { checkPushEndpoint, checkPushKeys } from '../../functions/core/push-endpoint.js';

const REQUIRED = 'endpoint is required.';
const NOT_URL = 'endpoint must be a valid URL.';
const NOT_HTTPS = 'endpoint must use HTTPS.';
const BLOCKED = 'endpoint host is not allowed.';
const NOT_PROVIDER = 'endpoint host must be a supported Web Push provider.';

describe('accepted endpoints', () => {
  it.each([
    ['https://fcm.googleapis.com/fcm/send/abc:APA91b', 'https://fcm.googleapis.com/fcm/send/abc:APA91b'],
    ['https://FCM.GoogleAPIs.com/fcm/send/x', 'https://fcm.googleapis.com/fcm/send/x'],
    ['https://fcm.googleapis.com:443/fcm/send/x', 'https://fcm.googleapis.com/fcm/send/x'],
    ['https://fcm.googleapis.com/wp/x?y=1#z', 'https://fcm.googleapis.com/wp/x?y=1#z'],
    ['  https://fcm.googleapis.com/x  ', 'https://fcm.googleapis.com/x'],
    ['https://web.push.apple.com/QGx', 'https://web.push.apple.com/QGx'],
    ['https://p01-web.push.apple.com/x', 'https://p01-web.push.apple.com/x'],
    ['https://push.apple.com/x', 'https://push.apple.com/x'],
    [
      'https://updates.push.services.mozilla.com/wpush/v2/gAAA',
      'https://updates.push.services.mozilla.com/wpush/v2/gAAA',
    ],
    ['https://push.services.mozilla.com/x', 'https://push.services.mozilla.com/x'],
    ['https://fcm.googleapis.com:8443/x', 'https://fcm.googleapis.com:8443/x'],
  ])('%s → %s', (given, normalized) => {
    expect(checkPushEndpoint(given)).toEqual({ ok: true, endpoint: normalized });
  });
});

describe('refused endpoints', () => {
  it.each([
    // Missing or not a URL.
    [undefined, REQUIRED],
    [null, REQUIRED],
    ['', REQUIRED],
    ['   ', REQUIRED],
    [42, NOT_URL],
    [{ url: 'https://fcm.googleapis.com/x' }, NOT_URL],
    ['fcm.googleapis.com/x', NOT_URL],
    ['https://', NOT_URL],
    ['https://256.1.1.1/x', NOT_URL],
    // Not HTTPS.
    ['http://fcm.googleapis.com/x', NOT_HTTPS],
    ['ftp://fcm.googleapis.com/x', NOT_HTTPS],
    ['wss://fcm.googleapis.com/x', NOT_HTTPS],
    ['javascript:alert(1)', NOT_HTTPS],
    // Local names.
    ['https://localhost/x', BLOCKED],
    ['https://LOCALHOST:8443/x', BLOCKED],
    ['https://push.localhost/x', BLOCKED],
    ['https://printer.local/x', BLOCKED],
    ['https://metadata.google.internal/x', BLOCKED],
    ['https://intranet/x', BLOCKED],
    // IPv4 in every notation the URL parser understands.
    ['https://127.0.0.1/x', BLOCKED],
    ['https://127.1/x', BLOCKED],
    ['https://2130706433/x', BLOCKED],
    ['https://0x7f000001/x', BLOCKED],
    ['https://0x7f.0.0.1/x', BLOCKED],
    ['https://0177.0.0.1/x', BLOCKED],
    ['https://10.1.2.3/x', BLOCKED],
    ['https://0.0.0.0/x', BLOCKED],
    ['https://169.254.169.254/latest/meta-data', BLOCKED],
    ['https://172.16.0.1/x', BLOCKED],
    ['https://172.31.255.255/x', BLOCKED],
    ['https://192.168.1.1/x', BLOCKED],
    ['https://100.64.0.1/x', BLOCKED],
    ['https://100.127.255.254/x', BLOCKED],
    // IPv6.
    ['https://[::1]/x', BLOCKED],
    ['https://[::]/x', BLOCKED],
    ['https://[fc00::1]/x', BLOCKED],
    ['https://[fd12:3456::1]/x', BLOCKED],
    ['https://[fe80::1]/x', BLOCKED],
    ['https://[febf::1]/x', BLOCKED],
    ['https://[::ffff:127.0.0.1]/x', BLOCKED],
    ['https://[::ffff:7f00:1]/x', BLOCKED],
    ['https://[::ffff:a9fe:a9fe]/x', BLOCKED],
    ['https://[::ffff:192.168.0.1]/x', BLOCKED],
    // Credentials in the URL, look-alikes hidden behind them included.
    ['https://user:pass@fcm.googleapis.com/x', BLOCKED],
    ['https://fcm.googleapis.com@evil.example/x', BLOCKED],
    // Public addresses and every other host: not a push service.
    ['https://8.8.8.8/x', NOT_PROVIDER],
    ['https://172.32.0.1/x', NOT_PROVIDER],
    ['https://100.128.0.1/x', NOT_PROVIDER],
    ['https://[2001:db8::1]/x', NOT_PROVIDER],
    ['https://[::ffff:8.8.8.8]/x', NOT_PROVIDER],
    ['https://fcm.googleapis.com.evil.example/x', NOT_PROVIDER],
    ['https://evilfcm.googleapis.com/x', NOT_PROVIDER],
    ['https://x.fcm.googleapis.com/x', NOT_PROVIDER],
    ['https://evilpush.apple.com/x', NOT_PROVIDER],
    ['https://push.apple.com.evil.example/x', NOT_PROVIDER],
    ['https://push.services.mozilla.com.evil.example/x', NOT_PROVIDER],
    ['https://services.mozilla.com/x', NOT_PROVIDER],
    ['https://fcm.googleapis.com./x', NOT_PROVIDER],
    ['https://example.com/x', NOT_PROVIDER],
    ['https://fcm.googleapis.c\u043em/x', NOT_PROVIDER],
  ])('%j → %s', (given, message) => {
    expect(checkPushEndpoint(given)).toEqual({ ok: false, field: 'endpoint', message });
  });
});

describe('subscription keys', () => {
  it('come back trimmed', () => {
    expect(checkPushKeys({ p256dh: ' BPk ', auth: ' aGk ', extra: 1 })).toEqual({
      ok: true,
      p256dh: 'BPk',
      auth: 'aGk',
    });
  });

  it.each([
    [undefined, 'keys', 'keys must be an object with p256dh and auth.'],
    ['abc', 'keys', 'keys must be an object with p256dh and auth.'],
    [['p', 'a'], 'keys', 'keys must be an object with p256dh and auth.'],
    [{ auth: 'a' }, 'keys.p256dh', 'keys.p256dh is required.'],
    [{ p256dh: '  ', auth: 'a' }, 'keys.p256dh', 'keys.p256dh is required.'],
    [{ p256dh: 7, auth: 'a' }, 'keys.p256dh', 'keys.p256dh is required.'],
    [{ p256dh: 'p' }, 'keys.auth', 'keys.auth is required.'],
    [{ p256dh: 'p', auth: '' }, 'keys.auth', 'keys.auth is required.'],
  ])('%j → %s: %s', (keys, field, message) => {
    expect(checkPushKeys(keys)).toEqual({ ok: false, field, message });
  });
});
