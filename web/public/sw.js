/**
 * The web app's service worker, served at /sw.js (scope /, `no-cache` like every unhashed file, so
 * a new version is picked up on the next visit). It does two things and nothing else (no caching,
 * no fetch handler):
 * - `push`: ALWAYS shows a notification, from the service's payload (contract §7.4:
 *   `{title, body, data: {chatId, messageId?, type, url}}`), or a generic one when the payload is
 *   missing or not that JSON: iOS revokes a subscription whose pushes show nothing.
 * - `notificationclick`: brings an open tab of the app forward and opens the chat there
 *   (`data.url`, a same-origin path such as /chats/<id>), or opens a new window at it.
 * - A request's reminder (contract §5.5.6) whose `data.actions` lists its options (a choice of one
 *   among at most two) shows them as the notification's actions; a click on one answers the request
 *   from here (POST /api/v1/requests/<id>/resolve with the session cookie: a worker's fetch carries
 *   the app's origin, so the service's cross-site check passes) and says what was sent, or why not.
 */
const FALLBACK_TITLE = 'Chat relay';
const FALLBACK_BODY = 'Open chat to view the latest update.';

/** `value` as a same-origin path, or "/" (a payload never sends the app elsewhere). */
function appPath(value) {
  if (typeof value !== 'string' || value.includes('\\')) return '/';
  try {
    const url = new URL(value, self.location.origin);
    return url.origin === self.location.origin ? `${url.pathname}${url.search}${url.hash}` : '/';
  } catch {
    return '/';
  }
}

const text = (value) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);

/** The notification's title and options from a push's data, whatever arrived. */
function notificationFrom(data) {
  let payload;
  try {
    payload = data ? data.json() : undefined;
  } catch {
    payload = undefined;
  }
  if (!payload || typeof payload !== 'object') {
    const raw = data ? text(data.text()) : undefined;
    return { title: FALLBACK_TITLE, options: { body: raw ?? FALLBACK_BODY, data: { url: '/' } } };
  }
  const info = payload.data && typeof payload.data === 'object' ? payload.data : {};
  const chatId = text(info.chatId);
  const url = appPath(info.url ?? (chatId ? `/chats/${encodeURIComponent(chatId)}` : '/'));
  const requestId = text(info.requestId);
  const actions = requestId ? answerActions(info.actions) : [];
  return {
    title: text(payload.title) ?? FALLBACK_TITLE,
    options: {
      body: text(payload.body) ?? FALLBACK_BODY,
      icon: '/icons/icon-192.png',
      badge: '/icons/icon-192.png',
      // One notification per chat: a newer one replaces the older, and still alerts.
      tag: chatId ? `chat:${chatId}` : undefined,
      renotify: Boolean(chatId),
      data: {
        chatId,
        messageId: text(info.messageId),
        type: text(info.type),
        url,
        ...(requestId ? { requestId } : {}),
        ...(actions.length ? { actions } : {}),
      },
      ...(actions.length ? { actions: actions.map(({ id, label }) => ({ action: id, title: label })) } : {}),
    },
  };
}

/** A reminder's answer actions (`[{id, label}]`, both non-empty strings), at most two; others are left out. */
function answerActions(value) {
  if (!Array.isArray(value)) return [];
  return value
    .filter((a) => a && typeof a === 'object' && text(a.id) && text(a.label))
    .slice(0, 2)
    .map((a) => ({ id: a.id, label: a.label }));
}

self.addEventListener('install', () => {
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('push', (event) => {
  const { title, options } = notificationFrom(event.data);
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const data = event.notification.data ?? {};
  const url = appPath(data.url);
  const chosen =
    event.action && Array.isArray(data.actions) ? data.actions.find((a) => a.id === event.action) : undefined;
  if (chosen && text(data.requestId)) {
    event.waitUntil(answer(event.notification.title, data.requestId, chosen, url));
    return;
  }
  event.waitUntil(openApp(url));
});

/**
 * Answers a request with the option a notification action chose, then says how it went in a
 * notification of its own (same tag, so it replaces the reminder): sent, already closed, or failed.
 */
async function answer(title, requestId, chosen, url) {
  let body;
  try {
    const res = await fetch(`/api/v1/requests/${encodeURIComponent(requestId)}/resolve`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': self.crypto.randomUUID() },
      body: JSON.stringify({ selectedOptionIds: [chosen.id] }),
    });
    if (res.ok) body = `Sent: ${chosen.label}`;
    else body = await refusal(res);
  } catch {
    body = 'Not sent: the service could not be reached. Open the chat to answer.';
  }
  await self.registration.showNotification(title || FALLBACK_TITLE, {
    body,
    icon: '/icons/icon-192.png',
    badge: '/icons/icon-192.png',
    tag: `request:${requestId}`,
    data: { type: 'request-answer', requestId, url },
  });
}

/** Why the service refused an answer, in words. */
async function refusal(res) {
  let envelope;
  try {
    envelope = (await res.json())?.error;
  } catch {
    envelope = undefined;
  }
  const status = envelope?.details?.status;
  if (res.status === 400 && typeof status === 'string' && status !== 'pending') {
    return `Not sent: the request was already ${status === 'resolved' ? 'answered' : status}.`;
  }
  if (res.status === 404) return 'Not sent: the request no longer exists.';
  if (res.status === 401 || res.status === 403) return 'Not sent: sign in to the app to answer.';
  return `Not sent: ${typeof envelope?.message === 'string' ? envelope.message : `the service answered ${res.status}`}. Open the chat to answer.`;
}

/** Focuses a tab of the app and has it open `url` (the app routes it without a reload), or opens one. */
async function openApp(url) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const tab = windows.find((client) => client.focused) ?? windows[0];
  if (!tab) return self.clients.openWindow(url);
  try {
    await tab.focus();
  } catch {
    // Focusing needs the click's user activation; a tab that cannot be raised still opens the chat.
  }
  tab.postMessage({ type: 'open', url });
}
