/**
 * Push payloads (contract §7.3, §7.4, §5.10.3, §12.4): the body normalized to 240 UTF-16 code
 * units, then shortened 16 characters at a time until the JSON fits in 4,000 bytes, or nothing
 * (a payload that cannot fit is not sent). Pure: no I/O.
 */

export interface PushData {
  chatId: string;
  messageId?: string | undefined;
  type: 'message' | 'request' | 'test';
  url: string;
  /** A reminder's request (§5.5.6): the notification's actions answer it. */
  requestId?: string | undefined;
  /** A reminder of a choice request with at most two options and one selection: the options, as notification actions. */
  actions?: { id: string; label: string }[] | undefined;
}

export const PUSH_BODY_LIMIT = 240;
export const PUSH_PAYLOAD_LIMIT_BYTES = 4000;
export const PUSH_SHRINK_STEP = 16;
export const PUSH_FALLBACK_BODY = 'Open chat to view the latest update.';
const NEW_MESSAGE = 'New message received.';
const PREVIEW_LENGTH = 180;
const ELLIPSIS = '…';

/** Step 1: trimmed, a fallback when empty, at most 240 characters with an ellipsis. */
function normalizedBody(source: string): string {
  const body = source.trim();
  if (body === '') return PUSH_FALLBACK_BODY;
  if (body.length <= PUSH_BODY_LIMIT) return body;
  return `${body.slice(0, PUSH_BODY_LIMIT - 1).trimEnd()}${ELLIPSIS}`;
}

const serialize = (title: string, body: string, data: PushData): string =>
  JSON.stringify({
    title,
    body,
    data: {
      chatId: data.chatId,
      ...(data.messageId !== undefined ? { messageId: data.messageId } : {}),
      type: data.type,
      url: data.url,
      ...(data.requestId !== undefined ? { requestId: data.requestId } : {}),
      ...(data.actions !== undefined ? { actions: data.actions } : {}),
    },
  });

const fits = (payload: string) => Buffer.byteLength(payload, 'utf8') <= PUSH_PAYLOAD_LIMIT_BYTES;

/** The payload text (§7.4 steps 1–3), or undefined when even an empty body does not fit. */
export function buildPushPayload(
  title: string,
  bodySource: string | null | undefined,
  data: PushData,
): string | undefined {
  let body = normalizedBody(bodySource ?? '');
  let payload = serialize(title, body, data);
  // Step 2: drop the last 16 characters, trim, put the ellipsis back, until it fits.
  while (!fits(payload) && body !== '') {
    const shorter = body.slice(0, Math.max(0, body.length - PUSH_SHRINK_STEP)).trimEnd();
    body = shorter === '' ? '' : `${shorter}${ELLIPSIS}`;
    payload = serialize(title, body, data);
  }
  // Step 3: give up.
  return fits(payload) ? payload : undefined;
}

/**
 * §7.3 body sources of a message push: a message created complete pushes its content (a
 * media-only one says a message arrived); a completed stream its trimmed text cut to 180.
 */
export function messageBodySource(contentFinal: string | null, streamed: boolean): string {
  if (!streamed) return contentFinal ?? NEW_MESSAGE;
  const text = (contentFinal ?? '').trim();
  return text === '' ? NEW_MESSAGE : text.slice(0, PREVIEW_LENGTH);
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/** A given URL kept only when it stays on our origin; its path, query and fragment (§5.10.3). */
function sameOriginPath(value: string): string | undefined {
  const base = 'https://relay.invalid';
  // Browsers read a backslash as a slash: "/\evil.example" is protocol-relative there.
  if (value.includes('\\')) return undefined;
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return undefined;
  }
  if (url.origin !== base) return undefined;
  return `${url.pathname}${url.search}${url.hash}`;
}

/** POST /push/test's title, body and data with the §5.10.3 defaults. */
export function testPushInput(body: { title?: unknown; body?: unknown; chatId?: unknown; url?: unknown }): {
  title: string;
  body: string;
  data: PushData;
} {
  const chatId = text(body.chatId) ?? 'test';
  const given = text(body.url);
  return {
    title: text(body.title) ?? 'OpenGram',
    body: text(body.body) ?? 'This is a test push notification.',
    data: { chatId, type: 'test', url: (given && sameOriginPath(given)) ?? `/chats/${chatId}` },
  };
}
