/**
 * Making a VAPID key pair (§7.7), for the custom resource that stores the instance's pair
 * (jobs/stored-secrets.ts) and the local runtime's key file (local/vapid.ts). Apart from
 * web-push.ts so that the functions that send pushes import `web-push` only when they send.
 */
import webpush from 'web-push';
import type { VapidKeyPair } from './web-push.js';

/** A new P-256 key pair, both halves base64url (§7.7). */
export function generateVapidKeys(): VapidKeyPair {
  return webpush.generateVAPIDKeys();
}
