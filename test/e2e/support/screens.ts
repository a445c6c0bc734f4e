/**
 * Every screen of the app, seeded and reached as a person reaches it, for the checks that run on
 * all of them (accessibility, phone widths, dark mode): screens.test.ts walks SCREENS at each
 * viewport and colour scheme.
 */
import { afterAll, beforeAll } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { createRequest, postMessage, seedChat } from './app.js';
import { sessionCookies, useRelay } from './relay.js';
import type { Relay } from './relay.js';

export interface Seeded {
  markdownChatId: string;
  mediaChatId: string;
  requestsChatId: string;
  archivedChatId: string;
}

export const MARKDOWN_MESSAGE = [
  '## Deploy plan',
  '',
  'Steps, in **order**:',
  '',
  '1. Build the `release` branch',
  '2. Run the [checks](https://example.com/checks)',
  '',
  '| Stage | Time |',
  '| --- | --- |',
  '| build | 3 min |',
  '| deploy | 5 min |',
  '',
  '```ts',
  'export function deploy(stage: string): Promise<void> {',
  '  return run(`cdk deploy --context stage=${stage} --require-approval never --all`);',
  '}',
  '```',
].join('\n');

export const CHOICE_ONE = {
  type: 'choice',
  title: 'Deploy now?',
  body: 'The build is green.',
  config: {
    options: [
      { id: 'yes', label: 'Deploy', variant: 'primary' },
      { id: 'no', label: 'Wait', variant: 'danger' },
    ],
  },
};
export const CHOICE_SEVERAL = {
  type: 'choice',
  title: 'Which regions?',
  config: {
    options: ['eu', 'us', 'ap'].map((id) => ({ id, label: id.toUpperCase() })),
    minSelections: 1,
    maxSelections: 2,
  },
};
export const TEXT_INPUT = {
  type: 'text_input',
  title: 'Name the release',
  config: { placeholder: 'Capitalised, 5 to 20 characters', validation: { minLength: 5, maxLength: 20 } },
};
export const FORM = {
  type: 'form',
  title: 'Shipping details',
  body: 'Where should it go?',
  config: {
    fields: [
      { name: 'recipient', type: 'text', label: 'Recipient', required: true },
      { name: 'notes', type: 'textarea', label: 'Delivery notes' },
      { name: 'speed', type: 'select', label: 'Speed', options: ['Standard', 'Express'], required: true },
      { name: 'extras', type: 'multiselect', label: 'Extras', options: ['Gift wrap', 'Insurance', 'Card'] },
      { name: 'signature', type: 'checkbox', label: 'Signature on delivery' },
      { name: 'day', type: 'date', label: 'Delivery day', required: true },
    ],
    submitLabel: 'Ship it',
  },
};

/** `seconds` of a 440 Hz tone as 8 kHz 16-bit mono WAV, 16 kB a second (the screens' voice note, the media tests' audio files). */
export function wav(seconds = 1): Buffer {
  const rate = 8000;
  const samples = Buffer.alloc(rate * seconds * 2);
  for (let i = 0; i < rate * seconds; i++)
    samples.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / rate) * 9000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]);
}

/** A chat whose agent message holds an image, an audio clip and a file. */
async function seedMedia(relay: Relay): Promise<string> {
  const chatId = await seedChat(relay, { title: 'Screenshots' });
  const photo = await sharp({ create: { width: 640, height: 400, channels: 3, background: '#2f6fb0' } })
    .png()
    .toBuffer();
  const files = [
    { fileName: 'dashboard.png', contentType: 'image/png', bytes: photo, kind: 'image' },
    { fileName: 'standup.wav', contentType: 'audio/wav', bytes: wav(), kind: 'audio' },
    { fileName: 'deploy.log', contentType: 'text/plain', bytes: Buffer.from('deploy ok\n'), kind: 'file' },
  ];
  const mediaIds: string[] = [];
  for (const file of files) {
    const res = await relay.api('POST', `/api/v1/chats/${chatId}/media`, {
      fileName: file.fileName,
      contentType: file.contentType,
      base64Data: file.bytes.toString('base64'),
      kind: file.kind,
    });
    if (res.status !== 201) throw new Error(`seeding ${file.fileName}: ${res.status} ${res.text}`);
    mediaIds.push((res.body as { id: string }).id);
  }
  // The app shows a message's media from its trace.mediaIds, as the page itself sends them.
  const res = await relay.api('POST', `/api/v1/chats/${chatId}/messages`, {
    role: 'agent',
    senderId: 'assistant',
    content: 'Here is the dashboard, a recording and the log.',
    trace: { mediaIds },
  });
  if (res.status !== 201) throw new Error(`seeding the media message: ${res.status} ${res.text}`);

  return chatId;
}

/**
 * The relay of a file that walks the seeded screens, seeded once in beforeAll (read `seeded`
 * inside tests: it is filled then). Seeding and the screens' reloads write from this one
 * address, so the per-IP write limit is lifted.
 */
export function useSeededScreens(): { relay: Relay; seeded: Seeded } {
  const relay = useRelay({ env: { OPENGRAM_WRITE_RATE_LIMIT_MAX: '100000' } });
  const seeded = {} as Seeded;
  beforeAll(async () => {
    Object.assign(seeded, await seedScreens(relay));
  }, 60_000);
  return { relay, seeded };
}

/** The data every screen shows: a pinned chat with markdown, a muted one, one with requests of each type, an archived one. */
export async function seedScreens(relay: Relay): Promise<Seeded> {
  const archivedChatId = await seedChat(relay, { title: 'Old notes', tags: ['notes'] });
  await postMessage(relay, archivedChatId, 'Kept for reference.');
  await relay.api('POST', `/api/v1/chats/${archivedChatId}/archive`);
  const quiet = await seedChat(relay, { title: 'Weekly report with a rather long title that does not fit' });
  await postMessage(relay, quiet, 'Nothing new this week.');
  await relay.api('PATCH', `/api/v1/chats/${quiet}`, { notificationsMuted: true });
  const requestsChatId = await seedChat(relay, { title: 'Release checks', agentIds: ['coder'] });
  await postMessage(relay, requestsChatId, 'A few questions before the release.');
  // The first two with deadlines (a default, a cancel): the cards' countdowns, and the Approvals view's order.
  const deadlines = [
    { inSeconds: 86_400, onExpiry: 'resolve', default: { selectedOptionIds: ['no'] }, remindBeforeSeconds: [3600] },
    { inSeconds: 7200 },
  ];
  for (const [i, request] of [CHOICE_ONE, CHOICE_SEVERAL, TEXT_INPUT, FORM].entries())
    await createRequest(relay, requestsChatId, { ...request, ...(deadlines[i] ? { deadline: deadlines[i] } : {}) });
  // Closed requests for the decision log (in the archived chat, out of the other screens' way).
  for (const close of ['resolve', 'cancel'] as const) {
    const { id } = await createRequest(relay, archivedChatId, CHOICE_ONE);
    const res = await relay.api(
      'POST',
      `/api/v1/requests/${id}/${close}`,
      close === 'resolve' ? { selectedOptionIds: ['yes'] } : undefined,
    );
    if (res.status !== 200) throw new Error(`closing a request: ${res.status} ${res.text}`);
  }
  const mediaChatId = await seedMedia(relay);
  const markdownChatId = await seedChat(relay, { title: 'Deploy plan', tags: ['ops', 'release'] });
  await postMessage(relay, markdownChatId, 'What is the deploy plan?', 'user');
  await postMessage(relay, markdownChatId, MARKDOWN_MESSAGE);
  await relay.api('PATCH', `/api/v1/chats/${markdownChatId}`, { pinned: true });
  // The search box finds "deploy" once the index has the messages.
  for (;;) {
    const res = await relay.api('GET', '/api/v1/search?q=deploy&scope=messages');
    if ((res.body as { messages?: unknown[] }).messages?.length) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { markdownChatId, mediaChatId, requestsChatId, archivedChatId };
}

export interface Screen {
  name: string;
  /** Shown without a session (the sign-in form). */
  signedOut?: boolean;
  path(seeded: Seeded): string;
  /** Brings the page (already at `path`) to the screen's state and waits for it. */
  prepare(page: Page): Promise<void>;
}

const chatsNav = (page: Page) => page.getByRole('navigation', { name: 'Chats' });

/** The chat's actions: directly in the header on a wide screen, behind "Chat actions" on a phone. */
async function chatAction(page: Page, name: string): Promise<void> {
  const button = page.getByRole('toolbar', { name: 'Chat actions' }).getByRole('button', { name, exact: true });
  if (!(await button.isVisible())) await page.getByRole('button', { name: 'Chat actions' }).click();
  await button.click();
}

export const SCREENS: Screen[] = [
  {
    name: 'sign-in',
    signedOut: true,
    path: () => '/',
    prepare: (page) => page.getByRole('heading', { name: 'Sign in' }).waitFor(),
  },
  {
    name: 'sign-in-error',
    signedOut: true,
    path: () => '/',
    prepare: async (page) => {
      await page.getByLabel('Instance secret').fill('og_not-the-secret');
      await page.getByLabel('Instance secret').press('Enter');
      await page.getByRole('alert').filter({ hasText: 'Wrong secret' }).waitFor();
    },
  },
  {
    // The standalone sign-in page served beside another UI (web/public/relay-sign-in.html).
    name: 'standalone-sign-in',
    signedOut: true,
    path: () => '/relay-sign-in.html',
    prepare: async (page) => {
      await page.getByLabel('Instance secret').fill('og_not-the-secret');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Wrong secret' }).waitFor();
    },
  },
  {
    name: 'inbox',
    path: () => '/',
    prepare: (page) => chatsNav(page).getByTestId('pinned-marker').waitFor(),
  },
  {
    name: 'archived',
    path: () => '/archived',
    prepare: (page) => chatsNav(page).getByTestId('chat-item').filter({ hasText: 'Old notes' }).waitFor(),
  },
  {
    name: 'chat',
    path: (s) => `/chats/${s.markdownChatId}`,
    // Highlighted: highlight.js arrives on its own (its colours are what contrast is checked on).
    prepare: (page) => page.getByRole('log', { name: 'Messages' }).locator('pre code.hljs').waitFor(),
  },
  {
    name: 'requests',
    path: (s) => `/chats/${s.requestsChatId}`,
    prepare: async (page) => {
      // On a phone the requests fold into a bar: open it.
      const region = page.getByRole('region', { name: 'Pending requests' });
      await region.waitFor();
      const toggle = region.getByRole('button', { name: /pending request/ });
      if (await toggle.isVisible()) await toggle.click();
      await region.getByRole('heading', { name: 'Shipping details' }).waitFor();
    },
  },
  {
    name: 'chat-actions',
    path: (s) => `/chats/${s.markdownChatId}`,
    prepare: async (page) => {
      await page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' }).waitFor();
      // On a wide screen the actions sit in the header already (the toggle is for phones).
      const toggle = page.getByRole('button', { name: 'Chat actions' });
      if (await toggle.isVisible()) await toggle.click();
      await page.getByRole('toolbar', { name: 'Chat actions' }).getByRole('button', { name: 'Rename' }).waitFor();
    },
  },
  {
    name: 'tags',
    path: (s) => `/chats/${s.markdownChatId}`,
    prepare: async (page) => {
      await page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' }).waitFor();
      await chatAction(page, 'Tags');
      await page.getByRole('dialog', { name: 'Tags' }).getByRole('button', { name: 'Remove tag ops' }).waitFor();
    },
  },
  {
    name: 'media',
    path: (s) => `/chats/${s.mediaChatId}`,
    prepare: async (page) => {
      const image = page.getByRole('button', { name: 'View dashboard.png' }).locator('img');
      await image.waitFor();
      await page.waitForFunction((img) => (img as HTMLImageElement).complete, await image.elementHandle());
      await page.locator('[data-testid="attachment"][data-kind="audio"] audio').waitFor();
    },
  },
  {
    name: 'image-viewer',
    path: (s) => `/chats/${s.mediaChatId}`,
    prepare: async (page) => {
      await page.getByRole('button', { name: 'View dashboard.png' }).click();
      await page.getByRole('dialog', { name: 'dashboard.png' }).getByTestId('full-image').waitFor();
    },
  },
  {
    name: 'attaching',
    path: (s) => `/chats/${s.markdownChatId}`,
    prepare: async (page) => {
      await page.getByTestId('chat-heading').filter({ hasText: 'Deploy plan' }).waitFor();
      await page
        .getByTestId('attach-input')
        .setInputFiles([{ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Remember the milk.') }]);
      await page.locator('[data-testid="pending-attachment"][data-status="done"]').waitFor();
    },
  },
  {
    name: 'new-chat',
    path: () => '/new',
    prepare: (page) => page.getByRole('heading', { name: 'New chat' }).waitFor(),
  },
  {
    name: 'search',
    path: () => '/',
    prepare: async (page) => {
      await page.getByRole('searchbox', { name: 'Search' }).fill('deploy');
      await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
      await page.getByTestId('search-results').getByTestId('search-hit').first().waitFor();
    },
  },
  {
    name: 'settings',
    path: () => '/settings',
    prepare: async (page) => {
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      await page.getByRole('group', { name: 'Agent 1' }).waitFor();
    },
  },
  {
    // A refused save (an agent without an ID): the message at its field; nothing is stored.
    name: 'settings-error',
    path: () => '/settings',
    prepare: async (page) => {
      await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Add agent' }).click();
      await page.getByRole('group', { name: 'Agent 3' }).getByLabel('Name', { exact: true }).fill('Nameless');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.getByTestId('field-error').waitFor();
    },
  },
  {
    name: 'account-menu',
    path: () => '/',
    prepare: async (page) => {
      await chatsNav(page).getByTestId('chat-item').first().waitFor();
      await page.getByRole('button', { name: 'Account' }).click();
      await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    },
  },
  {
    name: 'approvals',
    path: () => '/approvals',
    prepare: async (page) => {
      await page.getByRole('heading', { name: 'Approvals', level: 1 }).waitFor();
      await page.locator('[data-testid="approval"] [role="timer"]').first().waitFor();
    },
  },
  {
    name: 'decisions',
    path: () => '/decisions',
    prepare: async (page) => {
      await page.getByRole('heading', { name: 'Decisions', level: 1 }).waitFor();
      await page.getByTestId('decision').first().waitFor();
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.locator('[data-testid="verify-result"][data-state="intact"]').waitFor();
    },
  },
  {
    // A path the app cannot decode (issue 33 item 18): the not-found view beside the chat list.
    name: 'not-found',
    path: () => '/chats/%E0%A4%A',
    prepare: (page) => page.getByRole('heading', { name: 'Page not found', level: 1 }).waitFor(),
  },
];

/**
 * The file's two pages, one signed in (the session cookies in its context, as openApp sets them)
 * and one without a session, each made on first use and closed in afterAll. Every screen is a
 * fresh load of its path at each size (showScreen), so a page made per screen only added its
 * making and a cold cache: measured on screens.test.ts alone, a context per screen opening the
 * inbox first took 15.5 s of its 88 s. What the app keeps between loads (the session hint in
 * localStorage, drafts in sessionStorage) no screen changes.
 */
export function useScreenPages(holder: { browser: Browser }, relay: Relay): (screen: Screen) => Promise<Page> {
  const opened = new Map<boolean, Promise<{ context: BrowserContext; page: Page }>>();
  const open = async (signedOut: boolean) => {
    const context = await holder.browser.newContext();
    if (!signedOut) await context.addCookies(await sessionCookies(relay));
    return { context, page: await context.newPage() };
  };
  afterAll(async () => {
    for (const made of opened.values()) await (await made).context.close();
  });
  return async (screen) => {
    const signedOut = screen.signedOut ?? false;
    if (!opened.has(signedOut)) opened.set(signedOut, open(signedOut));
    return (await opened.get(signedOut)!).page;
  };
}

/** Goes to the screen (a fresh load of its path) and prepares it. */
export async function showScreen(page: Page, relay: Relay, seeded: Seeded, screen: Screen): Promise<void> {
  await page.goto(`${relay.url}${screen.path(seeded)}`);
  await screen.prepare(page);
  // Where the chat list shows (beside the screen on a wide one), it has finished loading.
  const list = page.getByTestId('chat-list');
  if (await list.isVisible()) await page.locator('[data-testid="chat-list"][aria-busy="false"]').waitFor();
}
