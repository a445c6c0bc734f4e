/**
 * The web app's service worker, served at /sw.js (scope /, `no-cache` like every unhashed file, so
 * a new version is picked up on the next visit). It does two things and nothing else (no caching,
 * no fetch handler):
 * - `push`: ALWAYS shows a notification, from the service's payload (contract §7.4:
 *   `{title, body, data: {chatId, messageId?, type, url}}`), or a generic one when the payload is
 *   missing or not that JSON: iOS revokes a subscription whose pushes show nothing.
 * - `notificationclick`: brings an open tab of the app forward and opens the chat there
 *   (`data.url`, a same-origin path such as /chats/<id>), or opens a new window at it.
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
  return {
    title: text(payload.title) ?? FALLBACK_TITLE,
    options: {
      body: text(payload.body) ?? FALLBACK_BODY,
      icon: '/icons/icon-192.png',
      badge: '/icons/icon-192.png',
      // One notification per chat: a newer one replaces the older, and still alerts.
      tag: chatId ? `chat:${chatId}` : undefined,
      renotify: Boolean(chatId),
      data: { chatId, messageId: text(info.messageId), type: text(info.type), url },
    },
  };
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
  const url = appPath(event.notification.data?.url);
  event.waitUntil(openApp(url));
});

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
