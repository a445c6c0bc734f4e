/**
 * The VAPID key pair signing this instance's pushes (contract §7.7): from the configuration
 * document when it names one, otherwise held apart from it (the table's SECRET#VAPID item in AWS,
 * read by the functions whose STORED_SECRETS lists VAPID, store/secrets-repo.ts; a file under
 * DATA_DIR locally, VAPID_KEYS_FILE). The private key is never logged or returned.
 */
import { readFile } from 'node:fs/promises';
import { env } from '../platform/env.js';
import { VAPID_KEY_HELD_APART } from '../platform/instance-config.js';
import type { InstanceConfig } from '../platform/instance-config.js';
import { parseVapidPair } from '../platform/web-push.js';
import type { VapidKeyPair } from '../platform/web-push.js';
import { mayReadStoredSecret, requiredStoredSecret } from '../store/secrets-repo.js';

async function keyPairHeldApart(): Promise<VapidKeyPair> {
  const e = env();
  if (mayReadStoredSecret('VAPID')) return parseVapidPair(await requiredStoredSecret('VAPID'));
  if (e.VAPID_KEYS_FILE) return parseVapidPair(await readFile(e.VAPID_KEYS_FILE, 'utf8'));
  throw new Error('No VAPID key pair: STORED_SECRETS lists no VAPID and VAPID_KEYS_FILE is not set');
}

/** The key pair signing this instance's pushes. */
export async function vapidKeys(config: InstanceConfig): Promise<VapidKeyPair> {
  const { vapidPublicKey, vapidPrivateKey } = config.push;
  if (vapidPrivateKey !== VAPID_KEY_HELD_APART) return { publicKey: vapidPublicKey, privateKey: vapidPrivateKey };
  return keyPairHeldApart();
}
