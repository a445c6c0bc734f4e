/**
 * Sign-in flows in a real browser against `npm start` (issue 26 item 4, selectors of the UI spec):
 * sign in with the instance secret and see the inbox; a wrong secret is said so and signs nothing
 * in; sign out from the Account menu returns to the form and a reload stays signed out; "sign out
 * everywhere" signs out another browser too; an open instance (no secret) opens directly and says
 * it is open.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { screenshots, useBrowser } from './support/browser.js';
import { seedChat, useRelay } from './support/relay.js';

const chromium = useBrowser();
const contexts: BrowserContext[] = [];

/** A page in a fresh browser profile (no cookie), closed after the test. */
async function freshPage(): Promise<Page> {
  const context = await chromium.browser.newContext({ viewport: { width: 1280, height: 800 } });
  contexts.push(context);
  return context.newPage();
}
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((context) => context.close()));
});

const signInForm = (page: Page) => page.getByRole('form', { name: 'Sign in' });
const inbox = (page: Page) => page.getByRole('navigation', { name: 'Chats' });

async function signIn(page: Page, secret: string): Promise<void> {
  await page.getByLabel('Instance secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const hasSessionCookie = async (page: Page) =>
  (await page.context().cookies(`${new URL(page.url()).origin}/api/v1`)).some((c) => c.name === 'relay_session');

describe('with the instance secret on', () => {
  const relay = useRelay();
  beforeAll(async () => {
    await seedChat(relay, { title: 'Release notes', firstMessage: 'Draft the notes for 1.2' });
  });

  it('signs in: the secret typed into "Instance secret", "Sign in", and the inbox appears', async () => {
    const page = await freshPage();
    await page.goto(`${relay.url}/`);
    await signInForm(page).getByRole('heading', { name: 'Sign in' }).waitFor();
    await expect(inbox(page).count()).resolves.toBe(0);
    await screenshots(page, 'sign-in');
    await signIn(page, relay.secret!);
    await inbox(page).getByTestId('chat-item').filter({ hasText: 'Release notes' }).waitFor();
    await expect(signInForm(page).count()).resolves.toBe(0);
    expect(await hasSessionCookie(page)).toBe(true);
    await screenshots(page, 'inbox-signed-in');
    // A reload keeps the session: the inbox again, no form.
    await page.reload();
    await inbox(page).getByTestId('chat-item').first().waitFor();
    await expect(signInForm(page).count()).resolves.toBe(0);
  });

  it('a wrong secret: an alert "Wrong secret", still the form, no cookie', async () => {
    const page = await freshPage();
    await page.goto(`${relay.url}/`);
    await signIn(page, `${relay.secret}-wrong`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Wrong secret');
    await expect(signInForm(page).isVisible()).resolves.toBe(true);
    await expect(inbox(page).count()).resolves.toBe(0);
    expect(await hasSessionCookie(page)).toBe(false);
    // The field does not keep what was typed.
    expect(await page.getByLabel('Instance secret').inputValue()).toBe('');
  });

  it('signs out: Account → Sign out shows the form again, and a reload stays signed out', async () => {
    const page = await freshPage();
    await page.goto(`${relay.url}/`);
    await signIn(page, relay.secret!);
    await inbox(page).waitFor();
    await page.getByRole('button', { name: 'Account' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signInForm(page).waitFor();
    expect(await hasSessionCookie(page)).toBe(false);
    await page.reload();
    await signInForm(page).waitFor();
    await expect(inbox(page).count()).resolves.toBe(0);
  });

  it('"Sign out everywhere" signs out another browser too', async () => {
    const [first, second] = [await freshPage(), await freshPage()];
    for (const page of [first, second]) {
      await page.goto(`${relay.url}/`);
      await signIn(page, relay.secret!);
      await inbox(page).waitFor();
    }
    await first!.getByRole('button', { name: 'Account' }).click();
    await first!.getByRole('button', { name: 'Sign out everywhere' }).click();
    await signInForm(first!).waitFor();
    // The other browser still holds its cookie, but the key that signed it is gone.
    expect(await hasSessionCookie(second!)).toBe(true);
    await second!.reload();
    await signInForm(second!).waitFor();
    await expect(inbox(second!).count()).resolves.toBe(0);
  });
});

describe('with the instance secret off', () => {
  const relay = useRelay({ secret: false });

  it('opens directly and says "This instance is open", with no sign-in', async () => {
    const page = await freshPage();
    await page.goto(`${relay.url}/`);
    const notice = page.getByTestId('open-instance');
    await notice.waitFor();
    expect(await notice.getAttribute('role')).toBe('status');
    expect(await notice.textContent()).toContain('This instance is open');
    await inbox(page).waitFor();
    await expect(signInForm(page).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: 'Account' }).count()).resolves.toBe(0);
  });
});
