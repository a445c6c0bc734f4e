/**
 * The local runtime's VAPID key pair (contract §7.7), held apart from the configuration as the
 * stack holds it in a secret: a file (mode 0600) made once, on the first start, and reused on
 * every start after, so browser subscriptions survive restarts. It is made whether or not push
 * is enabled yet, so enabling push later needs no restart; it is never regenerated while the
 * file exists. The handlers get its path (VAPID_KEYS_FILE) and the public key (VAPID_PUBLIC_KEY).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateVapidKeys } from '../functions/platform/vapid-keys.js';
import type { VapidKeyPair } from '../functions/platform/web-push.js';

function readPair(path: string): VapidKeyPair | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const pair = JSON.parse(text) as Partial<VapidKeyPair>;
  if (typeof pair.publicKey !== 'string' || typeof pair.privateKey !== 'string') {
    throw new Error(`${path} does not hold a VAPID key pair; move it away to have a new one made.`);
  }
  return { publicKey: pair.publicKey, privateKey: pair.privateKey };
}

/** The key pair kept at `path`, made there first if there is none. Returns the public key. */
export function ensureVapidKeys(path: string): string {
  const existing = readPair(path);
  if (existing) return existing.publicKey;
  mkdirSync(dirname(path), { recursive: true });
  try {
    // 'wx': if another process made the file meanwhile, keep theirs.
    writeFileSync(path, JSON.stringify(generateVapidKeys()), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readPair(path)!.publicKey;
}
