/**
 * Opaque, tamper-proof pagination cursors: the keyset position (the last returned item's
 * keys) as base64url JSON, signed with an HMAC whose key is generated once per instance (its own
 * partition, Keys.generatedSecret('CURSOR'): only the paginating routes may reach it).
 * A cursor from another list, a forged one or a truncated one fails to decode → 400.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { FieldRuleError } from '../errors.js';
import { existingSecret, generatedSecret } from './secrets-repo.js';

export type CursorPosition = Record<string, string | number>;

const MAC_BYTES = 16;
const sign = (key: string, body: string) => createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);

export async function encodeCursor(list: string, position: CursorPosition): Promise<string> {
  const body = Buffer.from(JSON.stringify({ l: list, p: position })).toString('base64url');
  const mac = sign(await generatedSecret('CURSOR'), body).toString('base64url');
  return `${body}.${mac}`;
}

export const invalidCursor = () => new FieldRuleError('cursor', 'Invalid cursor value.');

/** Returns the position, or throws 400 `Invalid cursor value.` when the cursor is not one of ours for `list`. */
export async function decodeCursor(list: string, cursor: string): Promise<CursorPosition> {
  const [body, mac, extra] = cursor.split('.');
  if (!body || !mac || extra !== undefined) throw invalidCursor();
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== MAC_BYTES) throw invalidCursor();
  // No key yet means no cursor was ever issued: reject without generating one (a 400 writes nothing).
  const key = await existingSecret('CURSOR');
  if (key === undefined || !timingSafeEqual(given, sign(key, body))) throw invalidCursor();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const { l, p } = (parsed ?? {}) as { l?: unknown; p?: unknown };
  if (l !== list || typeof p !== 'object' || p === null) throw invalidCursor();
  return p as CursorPosition;
}

/**
 * The sort key a chat-scoped list resumes after (a cursor of `{ s }`), or undefined without a
 * cursor. Decoded before the chat's existence is checked (§1.14: rule errors before 404s); a
 * cursor that decodes was issued for this chat's list, so the chat existed.
 */
export async function sortKeyAfter(list: string, cursor: string | undefined): Promise<string | undefined> {
  if (cursor === undefined) return undefined;
  const position = await decodeCursor(list, cursor);
  if (typeof position.s !== 'string') throw invalidCursor();
  return position.s;
}
