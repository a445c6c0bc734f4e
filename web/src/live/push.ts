/**
 * This browser's web push subscription (contract §5.10, §7): the service worker (/sw.js, scope /)
 * shows every push and opens its chat on a click; subscribing asks for the notification
 * permission, subscribes the worker's PushManager with the instance's VAPID public key and hands
 * the subscription to the service; unsubscribing removes it from the service, then from the browser.
 */
import { api } from '../api/client';
import type { PublicConfig } from '../api/types';
import { navigate } from '../router';

const WORKER_URL = '/sw.js';

/** What the switch can say about push in this browser, on this instance. */
export type PushStatus =
  { state: 'unavailable'; reason: string } | { state: 'denied' } | { state: 'off' } | { state: 'on' };

export const pushSupported = (): boolean =>
  typeof window !== 'undefined' &&
  'serviceWorker' in navigator &&
  'PushManager' in window &&
  'Notification' in window &&
  window.isSecureContext;

/** The VAPID public key (base64url, an uncompressed P-256 point) as PushManager takes it. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(binary.length));
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const sameKey = (a: ArrayBuffer | null, b: Uint8Array): boolean => {
  if (!a || a.byteLength !== b.byteLength) return false;
  const view = new Uint8Array(a);
  return view.every((byte, i) => byte === b[i]);
};

let registering: Promise<ServiceWorkerRegistration> | undefined;

/**
 * Registers the service worker (once per page) and lets it open chats in this tab: a notification
 * click posts `{type: "open", url}` and the app routes there without a reload.
 */
export function registerServiceWorker(): Promise<ServiceWorkerRegistration> | undefined {
  if (!('serviceWorker' in navigator) || !window.isSecureContext) return undefined;
  if (!registering) {
    navigator.serviceWorker.addEventListener('message', (event: MessageEvent<unknown>) => {
      const data = event.data as { type?: unknown; url?: unknown } | null;
      if (
        data?.type === 'open' &&
        typeof data.url === 'string' &&
        data.url.startsWith('/') &&
        !data.url.startsWith('//')
      )
        navigate(data.url);
    });
    registering = navigator.serviceWorker.register(WORKER_URL, { scope: '/', updateViaCache: 'none' });
    registering.catch(() => {
      registering = undefined;
    });
  }
  return registering;
}

async function subscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration('/');
  return registration ? registration.pushManager.getSubscription() : null;
}

/** The truthful state: the instance's push setting, this browser's permission and subscription. */
export async function pushStatus(config: PublicConfig): Promise<PushStatus> {
  if (!pushSupported()) return { state: 'unavailable', reason: 'This browser cannot receive notifications.' };
  const key = config.push?.enabled ? config.push.vapidPublicKey : null;
  if (!key) return { state: 'unavailable', reason: 'Notifications are turned off on this instance.' };
  if (Notification.permission === 'denied') return { state: 'denied' };
  if (Notification.permission !== 'granted') return { state: 'off' };
  const current = await subscription();
  // A subscription made with another key (the instance's key pair changed) no longer receives.
  return current && sameKey(current.options.applicationServerKey, keyBytes(key)) ? { state: 'on' } : { state: 'off' };
}

/** Asks for the permission, subscribes this browser and stores the subscription with the service. */
export async function enablePush(config: PublicConfig): Promise<PushStatus> {
  const key = config.push?.enabled ? config.push.vapidPublicKey : null;
  if (!pushSupported() || !key) return pushStatus(config);
  const permission = await Notification.requestPermission();
  if (permission !== 'granted') return permission === 'denied' ? { state: 'denied' } : { state: 'off' };
  await registerServiceWorker();
  const registration = await navigator.serviceWorker.ready;
  const applicationServerKey = keyBytes(key);
  const existing = await registration.pushManager.getSubscription();
  if (existing && !sameKey(existing.options.applicationServerKey, applicationServerKey)) await existing.unsubscribe();
  const created = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey });
  const json = created.toJSON();
  try {
    await api.pushSubscribe({
      endpoint: created.endpoint,
      keys: { p256dh: json.keys?.p256dh ?? '', auth: json.keys?.auth ?? '' },
    });
  } catch (error) {
    // The service refused it: leave nothing half done in the browser.
    await created.unsubscribe().catch(() => false);
    throw error;
  }
  return { state: 'on' };
}

/** Removes the subscription from the service, then from the browser. */
export async function disablePush(config: PublicConfig): Promise<PushStatus> {
  const current = pushSupported() ? await subscription() : null;
  if (current) {
    if (config.push?.enabled) await api.pushUnsubscribe(current.endpoint);
    await current.unsubscribe();
  }
  return pushStatus(config);
}
