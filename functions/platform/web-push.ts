/**
 * Web Push delivery (contract §7.5): the `web-push` package builds each request (aes128gcm
 * payload encryption, RFC 8291; the VAPID ES256 JWT for the endpoint's origin, 12 h, RFC 8292)
 * and a transport sends it. The transport is `fetch` with a per-attempt timeout and no
 * redirects; tests replace it with one that records the requests (no network).
 *
 * The VAPID key pair (§7.7) is found by core/push-keys.ts, read only by the functions that
 * send. The private key is never logged or returned.
 *
 * `web-push` (with its JWT, ASN.1 and big-number code, ~110 KB bundled) is imported on first
 * use, not at load: the subscribe and unsubscribe routes share
 * this module with the sender and never send. Key generation lives in vapid-keys.ts.
 */
import type webpushModule from 'web-push';
import { env } from './env.js';

/** §12.4: how long push services keep an undelivered message. */
export const PUSH_TTL_SECONDS = 2_419_200;

export interface VapidKeyPair {
  publicKey: string;
  privateKey: string;
}

export interface PushRequest {
  endpoint: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Sends one request; resolves with the push service's status, rejects on network failure or abort. */
export type PushTransport = (request: PushRequest, signal: AbortSignal) => Promise<number>;

const fetchTransport: PushTransport = async (request, signal) => {
  const response = await fetch(request.endpoint, {
    method: 'POST',
    headers: request.headers,
    body: request.body,
    signal,
    // A push service answers; it never sends us elsewhere (no request to a host we did not check).
    redirect: 'manual',
  });
  await response.body?.cancel();
  return response.status;
};

let transport: PushTransport = fetchTransport;

/** Tests only: replaces the transport (undefined restores fetch). */
export function setPushTransportForTests(replacement: PushTransport | undefined): void {
  transport = replacement ?? fetchTransport;
}

/**
 * A stored key pair (the table's item, the local key file), checked: a P-256 public key (65 bytes)
 * and private key (32 bytes), base64url. The custom resource that makes the item checks it so too.
 */
export function parseVapidPair(text: string): VapidKeyPair {
  try {
    const value = JSON.parse(text) as Partial<VapidKeyPair>;
    const publicKey = Buffer.from(value.publicKey ?? '', 'base64url');
    const privateKey = Buffer.from(value.privateKey ?? '', 'base64url');
    if (publicKey.length === 65 && privateKey.length === 32) return value as VapidKeyPair;
  } catch {
    // reported below
  }
  throw new Error('The VAPID item does not hold {"publicKey","privateKey"} (base64url P-256 keys); fix or delete it');
}

type WebPush = typeof webpushModule;
let loading: Promise<WebPush> | undefined;

/** web-push (a CommonJS module: its exports object), imported once on first use; a failed import is retried. */
function loadWebPush(): Promise<WebPush> {
  loading ??= import('web-push').then(
    (module) => (module as unknown as { default: WebPush }).default,
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

export interface PushTarget {
  endpoint: string;
  keys_p256dh: string;
  keys_auth: string;
}

/** The encrypted, signed request for one subscription (§7.5 headers: TTL, Urgency normal). */
export async function pushRequestFor(
  target: PushTarget,
  payload: string,
  keys: VapidKeyPair,
  subject: string,
): Promise<PushRequest> {
  const webpush = await loadWebPush();
  const details = webpush.generateRequestDetails(
    { endpoint: target.endpoint, keys: { p256dh: target.keys_p256dh, auth: target.keys_auth } },
    payload,
    {
      vapidDetails: { subject, publicKey: keys.publicKey, privateKey: keys.privateKey },
      TTL: PUSH_TTL_SECONDS,
      urgency: 'normal',
      contentEncoding: 'aes128gcm',
    },
  );
  const headers: Record<string, string> = {};
  // fetch sets Content-Length from the body itself.
  for (const [name, value] of Object.entries(details.headers)) {
    if (name.toLowerCase() !== 'content-length') headers[name.toLowerCase()] = String(value);
  }
  return { endpoint: details.endpoint, headers, body: details.body };
}

/** Sends one request with the per-attempt timeout; the push service's status, or throws. */
export function sendPushRequest(request: PushRequest): Promise<number> {
  return transport(request, AbortSignal.timeout(env().PUSH_TIMEOUT_MS));
}
