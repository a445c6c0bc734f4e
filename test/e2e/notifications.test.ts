/**
 * Notifications and the tab's live connection in a real browser against `npm start` (issue 27
 * items 5 and 8): the web manifest and its icons; the service worker at /sw.js with scope /; the
 * Account menu's "Notifications" switch subscribing and unsubscribing through the API, and saying
 * why it cannot (push off on the instance, permission blocked); a push shown as a notification and
 * its click opening the chat; a hidden tab giving its event stream back after 2 minutes and
 * replaying what it missed when shown again.
 *
 * What headless Chromium cannot do here, and what stands in for it:
 * - playwright's contexts are incognito profiles, where Chromium has no Push API
 *   (`pushManager.subscribe` rejects "Registration failed - permission denied"), and a real
 *   subscription would need Google's push service anyway. The switch's test replaces
 *   `PushManager.prototype.subscribe`/`getSubscription` in that page only, with a subscription shaped
 *   as Chrome makes one (an fcm.googleapis.com endpoint, real P-256 keys); everything after it (the
 *   API calls, the service's answers, the switch's state) is real.
 * - A push reaches the service worker through CDP `ServiceWorker.deliverPushMessage` (the browser's
 *   own push event path, without a push service); the notification it shows is read back with
 *   `registration.getNotifications()` in the worker.
 * - No CDP command clicks a notification: the test dispatches a `notificationclick` event with the
 *   shown notification in the worker. Without the user activation of a real click, the worker may
 *   not focus a window or open a new one, so the "no tab open" path (openWindow) is not exercised.
 * - The page's visibility is set by overriding `document.visibilityState` and dispatching
 *   `visibilitychange`; the 2 minutes pass on playwright's fake clock (`page.clock`).
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createECDH, randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import sharp from 'sharp';
import { EPHEMERAL_EVENT_TYPES, EVENT_TYPES } from '../../web/src/live/event-types.js';
import { screenshots, useBrowser } from './support/browser.js';
import { E2E_CONFIG, seedChat, useRelay } from './support/relay.js';
import { pushUntilShown } from './support/worker.js';

const PUSH = { push: { enabled: true, subject: 'mailto:ops@example.com' } };
const relay = useRelay({ config: PUSH });
// The full browser: the headless shell the other files run in has no notifications, permission or push.
const chromium = useBrowser({ full: true });
const contexts: BrowserContext[] = [];

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

async function newContext(options: { notifications?: boolean } = {}): Promise<BrowserContext> {
  const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  if (options.notifications) await context.grantPermissions(['notifications'], { origin: relay.url });
  return context;
}

/** Signs in through the form and waits for the inbox (or the chat, for a chat path). */
async function openSignedIn(page: Page, path = '/'): Promise<void> {
  await page.goto(`${relay.url}${path}`);
  await page.getByLabel('Instance secret').fill(relay.secret!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Chats' }).waitFor();
}

/** Reads until the value equals `expected` (a deep comparison), then asserts it: 15 s at most. */
async function eventually<T>(read: () => Promise<T> | T, expected: T, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let value = await read();
  while (!isDeepStrictEqual(value, expected) && Date.now() < until) {
    await new Promise((ok) => setTimeout(ok, 50));
    value = await read();
  }
  expect(value).toEqual(expected);
}

const notificationsSwitch = (page: Page) => page.getByRole('switch', { name: 'Notifications' });

async function openAccountMenu(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Account' }).click();
  await notificationsSwitch(page).waitFor();
}

async function postAgentMessage(chatId: string, content: string): Promise<string> {
  const res = await relay.api('POST', `/api/v1/chats/${chatId}/messages`, {
    role: 'agent',
    senderId: 'assistant',
    content,
  });
  if (res.status !== 201) throw new Error(`agent message: ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

/** The registered service worker of a context (playwright's handle: evaluate runs in the worker). */
async function serviceWorker(context: BrowserContext): Promise<Worker> {
  return context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
}

/** CDP's registration id of the app's service worker, for `ServiceWorker.deliverPushMessage`. */
async function registrationId(cdp: CDPSession): Promise<string> {
  const found = new Promise<string>((ok) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', (event) => {
      const registration = event.registrations.find((r) => r.scopeURL === `${relay.url}/` && !r.isDeleted);
      if (registration) ok(registration.registrationId);
    });
  });
  await cdp.send('ServiceWorker.enable');
  return found;
}

interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  data: { chatId?: string; messageId?: string; type?: string; url: string };
}

const shownNotifications = (worker: Worker): Promise<ShownNotification[]> =>
  worker.evaluate(async () => {
    const list = (await (self as any).registration.getNotifications()) as Notification[];
    return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
  });

/** A signed-in page whose service worker is ready, that worker, and a push delivered to it through DevTools. */
async function withWorker(context: BrowserContext) {
  const page = await context.newPage();
  await openSignedIn(page);
  await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  const worker = await serviceWorker(context);
  const cdp = await context.newCDPSession(page);
  const id = await registrationId(cdp);
  const push = (data: string) =>
    cdp.send('ServiceWorker.deliverPushMessage', { origin: relay.url, registrationId: id, data });
  return { page, worker, push };
}

describe('installable app', () => {
  it('serves a valid manifest with 192, 512 and maskable PNG icons, linked from the page', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${relay.url}/`);
    const head = await page.evaluate(() => ({
      manifest: document.querySelector('link[rel="manifest"]')?.getAttribute('href'),
      apple: document.querySelector('link[rel="apple-touch-icon"]')?.getAttribute('href'),
      theme: document.querySelector('meta[name="theme-color"]')?.getAttribute('content'),
    }));
    expect(head).toEqual({ manifest: '/manifest.webmanifest', apple: '/icons/apple-touch-icon.png', theme: '#2457d6' });

    const res = await fetch(`${relay.url}/manifest.webmanifest`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
    const manifest = (await res.json()) as Record<string, any>;
    expect(manifest).toMatchObject({
      name: 'Chat relay',
      short_name: 'Chat relay',
      start_url: '/',
      scope: '/',
      display: 'standalone',
      theme_color: '#2457d6',
    });
    expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/i);
    const icons = manifest.icons as { src: string; sizes: string; type: string; purpose: string }[];
    expect(icons.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual([
      '192x192 any',
      '512x512 any',
      '512x512 maskable',
    ]);
    for (const icon of [...icons, { src: head.apple!, sizes: '180x180', type: 'image/png' }]) {
      const file = await fetch(`${relay.url}${icon.src}`);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await file.arrayBuffer())).metadata();
      expect([meta.format, `${meta.width}x${meta.height}`]).toEqual(['png', icon.sizes]);
    }
    // The maskable icon and the touch icon are full bleed: opaque to the corners.
    for (const src of ['/icons/icon-maskable-512.png', head.apple!]) {
      const png = Buffer.from(await (await fetch(`${relay.url}${src}`)).arrayBuffer());
      const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
      expect(data[3]).toBe(255);
      expect(data[(info.width * info.height - 1) * 4 + 3]).toBe(255);
    }

    // Chromium's own reading of it: no parse errors, the icons it will use.
    const cdp = await context.newCDPSession(page);
    const parsed = await cdp.send('Page.getAppManifest', {});
    expect(parsed.url).toBe(`${relay.url}/manifest.webmanifest`);
    expect(parsed.errors).toEqual([]);
  });

  it('registers /sw.js with scope / (revalidated on every visit, not cached for a year)', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${relay.url}/`);
    const registration = await page.evaluate(async () => {
      const ready = await navigator.serviceWorker.ready;
      return { scope: ready.scope, script: ready.active?.scriptURL };
    });
    expect(registration).toEqual({ scope: `${relay.url}/`, script: `${relay.url}/sw.js` });
    const res = await fetch(`${relay.url}/sw.js`);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
  });
});

/**
 * Stands in for the Push API that incognito Chromium lacks: subscribe() records its options and
 * returns a subscription as Chrome makes one; getSubscription() returns it; unsubscribe() records.
 */
function stubPushManager({ keys, endpoint }: { keys: { p256dh: string; auth: string }; endpoint: string }) {
  const calls: { subscribe: string[]; unsubscribe: number } = { subscribe: [], unsubscribe: 0 };
  (window as any).__push = calls;
  let current: PushSubscription | null = null;
  const toBase64Url = (buffer: ArrayBuffer) =>
    btoa(String.fromCharCode(...new Uint8Array(buffer)))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
    const key = options!.applicationServerKey as Uint8Array;
    const applicationServerKey = key.slice().buffer;
    calls.subscribe.push(toBase64Url(applicationServerKey));
    current = {
      endpoint,
      expirationTime: null,
      options: { applicationServerKey, userVisibleOnly: Boolean(options?.userVisibleOnly) },
      getKey: () => null,
      toJSON: () => ({ endpoint, expirationTime: null, keys }),
      unsubscribe: async () => {
        calls.unsubscribe += 1;
        current = null;
        return true;
      },
    } as unknown as PushSubscription;
    return current;
  };
  PushManager.prototype.getSubscription = async () => current;
}

/** A browser subscription's keys: a real P-256 public key and a 16-byte auth secret. */
function deviceKeys(): { p256dh: string; auth: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') };
}

describe('the Notifications switch', () => {
  it('on: asks the permission, subscribes with the VAPID key of GET /config and POSTs the subscription; off: DELETEs it', async () => {
    const context = await newContext({ notifications: true });
    const keys = deviceKeys();
    const endpoint = `https://fcm.googleapis.com/fcm/send/e2e-${randomBytes(8).toString('hex')}`;
    await context.addInitScript(stubPushManager, { keys, endpoint });
    const page = await context.newPage();
    await openSignedIn(page);
    await openAccountMenu(page);
    const toggle = notificationsSwitch(page);
    await expect(toggle.getAttribute('aria-checked')).resolves.toBe('false');
    await screenshots(page, 'notifications-off');

    const posted = page.waitForResponse(
      (r) => r.url() === `${relay.url}/api/v1/push/subscribe` && r.request().method() === 'POST',
    );
    await toggle.click();
    const post = await posted;
    expect(post.request().postDataJSON()).toEqual({ endpoint, keys });
    expect(post.status()).toBe(201);
    expect(await post.json()).toEqual({ id: expect.any(String), endpoint });
    await eventually(() => toggle.getAttribute('aria-checked'), 'true');
    const { vapidPublicKey } = (await relay.api('GET', '/api/v1/config')).body.push;
    expect(await page.evaluate(() => (window as any).__push.subscribe)).toEqual([vapidPublicKey]);
    await screenshots(page, 'notifications-on');

    const deleted = page.waitForResponse(
      (r) => r.url() === `${relay.url}/api/v1/push/subscribe` && r.request().method() === 'DELETE',
    );
    await toggle.click();
    const del = await deleted;
    expect(del.request().postDataJSON()).toEqual({ endpoint });
    // removed: true, so the service had stored what the switch sent.
    expect(await del.json()).toEqual({ ok: true, removed: true });
    await eventually(() => toggle.getAttribute('aria-checked'), 'false');
    expect(await page.evaluate(() => (window as any).__push.unsubscribe)).toBe(1);
  });

  it('is disabled and says why when the permission is blocked', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const cdp = await chromium.browser.newBrowserCDPSession();
    await cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin: relay.url,
      browserContextId: (await (await context.newCDPSession(page)).send('Target.getTargetInfo')).targetInfo
        .browserContextId,
    });
    await openSignedIn(page);
    await openAccountMenu(page);
    const toggle = notificationsSwitch(page);
    await eventually(() => page.getByTestId('notifications').getAttribute('data-state'), 'denied');
    expect(await toggle.isDisabled()).toBe(true);
    expect(await page.getByText('Notifications are blocked for this site').count()).toBe(1);
    // The reason is the switch's description.
    const describedBy = await toggle.getAttribute('aria-describedby');
    expect(await page.locator(`[id="${describedBy}"]`).textContent()).toContain('blocked');
  });

  it('is disabled and says why when push is off on the instance', async () => {
    // PATCH /config/admin takes push settings only within a whole document (rawConfig, §5.2.2).
    const document = (push: { enabled: boolean }) => ({
      rawConfig: { ...E2E_CONFIG, security: { readEndpointsRequireInstanceSecret: true }, push },
    });
    expect((await relay.api('PATCH', '/api/v1/config/admin', document({ enabled: false }))).status).toBe(200);
    // Each function re-reads the configuration within CONFIG_CACHE_MS (5 s).
    const pushEnabled = async () => (await relay.api('GET', '/api/v1/config')).body.push.enabled as boolean;
    await eventually(pushEnabled, false);
    try {
      const context = await newContext({ notifications: true });
      const page = await context.newPage();
      await openSignedIn(page);
      await openAccountMenu(page);
      const toggle = notificationsSwitch(page);
      await eventually(() => page.getByTestId('notifications').getAttribute('data-state'), 'unavailable');
      expect(await toggle.isDisabled()).toBe(true);
      expect(await page.getByText('Notifications are turned off on this instance.').count()).toBe(1);
      await screenshots(page, 'notifications-unavailable');
    } finally {
      expect((await relay.api('PATCH', '/api/v1/config/admin', document(PUSH.push))).status).toBe(200);
      await eventually(pushEnabled, true);
    }
  });
});

describe('the service worker', () => {
  let chatId: string;
  beforeAll(async () => {
    chatId = await seedChat(relay, { title: 'Deploy plan', firstMessage: 'Plan the deploy' });
  });

  it('shows every push as a notification, and its click opens the chat in the open tab', async () => {
    const context = await newContext({ notifications: true });
    const { page, worker, push } = await withWorker(context);

    // The service's payload (contract §7.4).
    const messageId = 'msg-1';
    const url = `/chats/${chatId}`;
    await pushUntilShown(
      push,
      JSON.stringify({
        title: 'Assistant',
        body: 'The plan is ready.',
        data: { chatId, messageId, type: 'message', url },
      }),
      async () => (await shownNotifications(worker)).length > 0,
    );
    await eventually(async () => (await shownNotifications(worker)).length, 1);
    expect((await shownNotifications(worker))[0]).toEqual({
      title: 'Assistant',
      body: 'The plan is ready.',
      tag: `chat:${chatId}`,
      data: { chatId, messageId, type: 'message', url },
    });

    // A click on the chat's notification: the open tab goes to the chat (no reload).
    expect(new URL(page.url()).pathname).toBe('/');
    await page.evaluate(() => ((window as any).__samePage = true));
    await worker.evaluate(async (tag) => {
      const scope = self as any;
      const [notification] = (await scope.registration.getNotifications({ tag })) as Notification[];
      scope.dispatchEvent(new (scope.NotificationEvent as any)('notificationclick', { notification }));
    }, `chat:${chatId}`);
    await eventually(() => new URL(page.url()).pathname, url);
    await page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' }).waitFor();
    expect(await page.evaluate(() => (window as any).__samePage)).toBe(true);
    // The clicked notification is closed.
    await eventually(async () => (await shownNotifications(worker)).some((n) => n.tag === `chat:${chatId}`), false);
  });

  // A page of its own: a second push delivered through DevTools in one page was seen not to arrive
  // now and then (the first always did), so each push case gets a fresh page and worker.
  it('shows a push whose payload is not the service JSON too, with the fallback title', async () => {
    const context = await newContext({ notifications: true });
    const { worker, push } = await withWorker(context);
    // Not the service's JSON: still a notification (iOS revokes subscriptions that show nothing).
    await pushUntilShown(push, 'not json', async () => (await shownNotifications(worker)).some((n) => n.tag === ''));
    await eventually(async () => (await shownNotifications(worker)).find((n) => n.tag === '')?.title, 'Chat relay');
    expect((await shownNotifications(worker)).find((n) => n.tag === '')).toMatchObject({
      body: 'not json',
      data: { url: '/' },
    });
  });
});

/** Records every EventSource the page opens, with the events each delivered (id and type). */
function recordStreams(types: readonly string[]) {
  const Native = window.EventSource;
  const streams: { url: string; source: EventSource; events: { type: string; id: string; data: string }[] }[] = [];
  (window as any).__streams = streams;
  window.EventSource = class extends Native {
    constructor(url: string | URL, init?: EventSourceInit) {
      super(url, init);
      const record = {
        url: String(url),
        source: this as EventSource,
        events: [] as { type: string; id: string; data: string }[],
      };
      streams.push(record);
      for (const type of types)
        super.addEventListener(type, (event) => {
          const message = event as MessageEvent<string>;
          record.events.push({ type, id: message.lastEventId, data: message.data });
        });
    }
  };
}

/** Lets the test set the page's visibility: `__setHidden(true)` fires `visibilitychange`. */
function controllableVisibility() {
  let hidden = false;
  Object.defineProperty(document, 'visibilityState', {
    configurable: true,
    get: () => (hidden ? 'hidden' : 'visible'),
  });
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  (window as any).__setHidden = (value: boolean) => {
    hidden = value;
    document.dispatchEvent(new Event('visibilitychange'));
  };
}

/** Every persisted event type: the app's cursor is the last of any of them (opening the chat adds a chat.read). */
const PERSISTED: readonly string[] = EVENT_TYPES.filter((type) => !EPHEMERAL_EVENT_TYPES.has(type));

interface StreamView {
  url: string;
  readyState: number;
  events: { type: string; id: string; data: string }[];
}
const streams = (page: Page): Promise<StreamView[]> =>
  page.evaluate(() =>
    ((window as any).__streams as { url: string; source: EventSource; events: StreamView['events'] }[]).map((s) => ({
      url: s.url,
      readyState: s.source.readyState,
      events: s.events,
    })),
  );
const setHidden = (page: Page, hidden: boolean) => page.evaluate((value) => (window as any).__setHidden(value), hidden);
const EventSource_OPEN = 1;
const EventSource_CLOSED = 2;
const connection = (page: Page) => page.getByTestId('connection').getAttribute('data-state');

describe('a hidden tab', () => {
  let chatId: string;
  beforeAll(async () => {
    chatId = await seedChat(relay, { title: 'Night shift', firstMessage: 'Watch the queue' });
  });

  async function openChat(context: BrowserContext, routeStream?: (page: Page) => Promise<void>): Promise<Page> {
    await context.addInitScript(recordStreams, [...EVENT_TYPES]);
    await context.addInitScript(controllableVisibility);
    const page = await context.newPage();
    await page.clock.install();
    await routeStream?.(page);
    await openSignedIn(page, `/chats/${chatId}`);
    await page.getByTestId('chat-heading').filter({ hasText: 'Night shift' }).waitFor();
    return page;
  }

  it('gives its stream back after 2 minutes hidden, and shown again replays what it missed (cursor)', async () => {
    const context = await newContext();
    const page = await openChat(context);
    await eventually(() => connection(page), 'open');
    const before = await postAgentMessage(chatId, 'Queue is empty.');
    await page.getByTestId('message').filter({ hasText: 'Queue is empty.' }).waitFor();

    // The app's one stream is the last opened (React's strict mode starts and stops it once first).
    const opened = (await streams(page)).length;
    const states = async () => (await streams(page)).map((s) => s.readyState);
    expect(await states()).toEqual([...Array(opened - 1).fill(EventSource_CLOSED), EventSource_OPEN]);

    await setHidden(page, true);
    await page.clock.fastForward('01:59');
    expect((await states()).at(-1)).toBe(EventSource_OPEN);
    await page.clock.fastForward('00:02');
    await eventually(states, Array(opened).fill(EventSource_CLOSED));
    await eventually(() => connection(page), 'offline');
    // The last persisted event the first stream delivered (read once it is closed: final).
    const lastPersisted = (await streams(page))
      .at(-1)!
      .events.filter((e) => PERSISTED.includes(e.type))
      .at(-1)!;
    expect(lastPersisted.id).toBeTruthy();

    // Missed while hidden: an agent answer. Nothing reconnects while the tab stays hidden.
    const missed = await postAgentMessage(chatId, 'A job failed at 03:12.');
    await page.clock.fastForward('10:00');
    expect(await streams(page)).toHaveLength(opened);

    await setHidden(page, false);
    await eventually(async () => (await streams(page)).length, opened + 1);
    const second = (await streams(page))[opened]!;
    expect(new URL(second.url, relay.url).searchParams.get('cursor')).toBe(lastPersisted.id);
    // The stream replays the missed message (not only the app's re-read of the chat).
    await eventually(
      async () =>
        (await streams(page))[opened]!.events.some(
          (e) => e.type === 'message.created' && JSON.parse(e.data).payload.messageId === missed,
        ),
      true,
    );
    expect(
      (await streams(page))[opened]!.events.some(
        (e) => e.type === 'message.created' && JSON.parse(e.data).payload.messageId === before,
      ),
    ).toBe(false);
    await page.getByTestId('message').filter({ hasText: 'A job failed at 03:12.' }).waitFor();
    await eventually(() => connection(page), 'open');
  });

  it('released while waiting to retry a refused stream, it does not reconnect until shown', async () => {
    const context = await newContext();
    let refuse = true;
    const page = await openChat(context, async (p) => {
      await p.route('**/api/v1/events/stream**', (route) =>
        refuse ? route.fulfill({ status: 503, contentType: 'application/json', body: '{}' }) : route.continue(),
      );
    });
    // "offline": the last attempt was refused and the next one is waiting on a timer. Time now
    // moves only when the test says.
    await eventually(() => connection(page), 'offline');
    await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 100);
    await eventually(() => connection(page), 'offline');
    await setHidden(page, true);
    // Up to 1 s before the release: the pending retry runs (refused again) and the next one
    // waits at least 2 s, so the release comes between two attempts.
    await page.clock.runFor(119_000);
    await eventually(() => connection(page), 'offline');
    await page.clock.runFor(1_500);
    const atRelease = (await streams(page)).length;
    refuse = false;
    // The retry back-off (at most 30 s) would have connected by now.
    await page.clock.runFor('10:00');
    expect(await streams(page)).toHaveLength(atRelease);
    expect(await connection(page)).toBe('offline');
    await page.clock.resume();
    await setHidden(page, false);
    await eventually(async () => (await streams(page)).at(-1)?.readyState, EventSource_OPEN);
    expect(await streams(page)).toHaveLength(atRelease + 1);
    await eventually(() => connection(page), 'open');
  });
});

describe('on an open instance (no Account menu)', () => {
  const open = useRelay({ secret: false, config: PUSH });

  it('shows the Notifications switch in the header', async () => {
    const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    await context.grantPermissions(['notifications'], { origin: open.url });
    const page = await context.newPage();
    await page.goto(`${open.url}/`);
    await page.getByRole('navigation', { name: 'Chats' }).waitFor();
    await expect(page.getByRole('button', { name: 'Account' }).count()).resolves.toBe(0);
    const toggle = notificationsSwitch(page);
    await eventually(() => page.getByTestId('notifications').getAttribute('data-state'), 'off');
    expect(await toggle.isEnabled()).toBe(true);
    expect(await toggle.getAttribute('aria-checked')).toBe('false');
    await eventually(() => connection(page), 'open');
    await screenshots(page, 'notifications-open-instance');
    // On a phone the header keeps the switch whole on screen (its label visually hidden).
    await page.setViewportSize({ width: 390, height: 844 });
    const box = (await toggle.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(Math.min(box.width, box.height)).toBeGreaterThanOrEqual(44);
  });
});
