/**
 * Push test support: devices with real P-256 keys (so recorded payloads can be decrypted as a
 * browser would), and a recording transport in place of the network: every request `web-push`
 * built is kept, and the test decides what the push service answers.
 */
import { createECDH, randomBytes } from 'node:crypto';
import type { ECDH } from 'node:crypto';
import ece from 'http_ece';
import { setPushTransportForTests } from '../../../functions/platform/web-push.js';
import type { PushRequest } from '../../../functions/platform/web-push.js';
import { eventually } from '../../support/wait.js';

export interface Device {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  ecdh: ECDH;
}

let counter = 0;
/** A subscription as a browser makes it, on an allowed push service. */
export function newDevice(host = 'fcm.googleapis.com'): Device {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  counter += 1;
  return {
    endpoint: `https://${host}/fcm/send/device-${counter}-${randomBytes(6).toString('hex')}`,
    keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') },
    ecdh,
  };
}

export interface PushPayload {
  title: string;
  body: string;
  data: { chatId: string; messageId?: string; type: string; url: string };
}

/** Decrypts a recorded request body with the device's keys (RFC 8291, aes128gcm). */
export function decrypt(device: Device, request: PushRequest): PushPayload {
  const plain = ece.decrypt(request.body, {
    version: 'aes128gcm',
    privateKey: device.ecdh,
    authSecret: device.keys.auth,
  }) as Buffer;
  return JSON.parse(plain.toString('utf8')) as PushPayload;
}

export type Answer = number | 'timeout' | 'network';

export interface Recorder {
  requests: PushRequest[];
  /** Requests sent to one device, in order. */
  to(device: Device): PushRequest[];
  /** What the push service answers a request (201 unless set). */
  answer: (request: PushRequest, attempt: number) => Answer;
  /** Resolves once `count` requests have been recorded, or rejects after `ms`. */
  waitFor(count: number, ms?: number): Promise<void>;
  reset(): void;
}

/** Installs a recording transport for the rest of the test file. */
export function recordPushes(): Recorder {
  const recorder: Recorder = {
    requests: [],
    to: (device) => recorder.requests.filter((r) => r.endpoint === device.endpoint),
    answer: () => 201,
    async waitFor(count, ms = 5000) {
      await eventually(
        () => recorder.requests.length,
        (n) => n >= count,
        { timeoutMs: ms, what: `${count} push requests` },
      );
    },
    reset() {
      recorder.requests.length = 0;
      recorder.answer = () => 201;
    },
  };
  setPushTransportForTests(async (request, signal) => {
    recorder.requests.push(request);
    const answer = recorder.answer(request, recorder.to({ endpoint: request.endpoint } as Device).length);
    if (answer === 'network') throw new TypeError('fetch failed');
    if (answer === 'timeout') {
      // Hangs like an unresponsive service until the per-attempt timeout aborts it.
      return new Promise<number>((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
      );
    }
    return answer;
  });
  return recorder;
}

/** The claims of the VAPID JWT in a request's Authorization header, and its `k=` public key. */
export function vapidOf(request: PushRequest): { claims: Record<string, unknown>; publicKey: string } {
  const match = /^vapid t=([^,]+), k=(.+)$/.exec(request.headers.authorization ?? '');
  if (!match) throw new Error(`not a VAPID authorization: ${request.headers.authorization}`);
  const claims = JSON.parse(Buffer.from(match[1]!.split('.')[1]!, 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
  return { claims, publicKey: match[2]! };
}

/** The one sleep (functions/platform/retry.ts), here for the tests that import it from this module. */
export { sleep } from '../../../functions/platform/retry.js';
