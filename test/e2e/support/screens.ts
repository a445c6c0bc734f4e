/**
 * Every screen of the app, seeded and reached as a person reaches it, for the checks that run on
 * all of them (accessibility, phone widths, dark mode): the accessibility and phone tests walk
 * SCREENS at each viewport and colour scheme.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createRequest, openApp, postMessage, seedChat } from './app.js';
import type { Relay } from './relay.js';

export interface Seeded {
  markdownChatId: string;
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
  for (const request of [CHOICE_ONE, CHOICE_SEVERAL, TEXT_INPUT, FORM])
    await createRequest(relay, requestsChatId, request);
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
  return { markdownChatId, requestsChatId, archivedChatId };
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
    prepare: (page) => page.getByRole('log', { name: 'Messages' }).locator('pre code').waitFor(),
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
    name: 'account-menu',
    path: () => '/',
    prepare: async (page) => {
      await chatsNav(page).getByTestId('chat-item').first().waitFor();
      await page.getByRole('button', { name: 'Account' }).click();
      await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    },
  },
];

/** A context and page for `screen`: signed in (live connection open) or a fresh one without a session. */
export async function openScreenContext(
  browser: Browser,
  relay: Relay,
  screen: Screen,
  options: { viewport: { width: number; height: number }; colorScheme?: 'light' | 'dark' },
): Promise<{ context: BrowserContext; page: Page }> {
  if (screen.signedOut) {
    const context = await browser.newContext(options);
    return { context, page: await context.newPage() };
  }
  const app = await openApp(browser, relay, '/', options.viewport);
  return { context: app.context, page: app.page };
}

/** Goes to the screen (a fresh load of its path) and prepares it. */
export async function showScreen(page: Page, relay: Relay, seeded: Seeded, screen: Screen): Promise<void> {
  await page.goto(`${relay.url}${screen.path(seeded)}`);
  await screen.prepare(page);
}
