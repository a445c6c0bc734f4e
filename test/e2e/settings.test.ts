/**
 * The settings screen (issue 27 item 4) in a real browser against `npm start`: agents and models
 * added there reach the new-chat pickers, the default model changes, a refused change shows the
 * service's message at its field and changes nothing on the server, auto-rename's Test calls the
 * (fake) provider, a webhook's signing secret is write-only and signs deliveries, and rotating the
 * secret signs this browser out, refuses the old secret and never shows it.
 *
 * The instance secret is given in the configuration file (not OPENGRAM_INSTANCE_SECRET, which
 * would override any rotation, §12.2). Rotation runs last: it ends the session the others use.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { startFakeProvider } from '../support/fake-provider.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { join } from 'node:path';
import { SCREENSHOT_DIR, VIEWPORTS, screenshots, useBrowser } from './support/browser.js';
import { startRelay, useRelay } from './support/relay.js';

let fake: FakeProvider;
const env: Record<string, string> = {};
beforeAll(async () => {
  // Before the relay starts (hooks run in order): it reads the provider's address at start.
  fake = await startFakeProvider();
  env.AUTO_RENAME_BASE_URLS = JSON.stringify(fake.baseUrls);
});
afterAll(async () => {
  await fake?.close();
});

const relay = useRelay({ secretIn: 'config', env });
const holder = useBrowser();

/** A webhook receiver on loopback: every POST it gets, with its headers and raw body. */
interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}
let receiver: Server;
let receiverUrl = '';
const deliveries: Delivery[] = [];
let delivered: (d: Delivery) => void = () => {};
beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      deliveries.push(delivery);
      delivered(delivery);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/relay-hook`;
});
afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((ok) => receiver?.close(ok));
});

let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  context = await holder.browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  await signIn(relay.secret!);
});
afterAll(async () => {
  await context?.close();
});

async function signIn(secret: string) {
  if (!page.url().startsWith(relay.url)) await page.goto(`${relay.url}/`);
  await page.getByLabel('Instance secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Settings' }).waitFor();
}

/** Opens the settings screen from the header, loaded afresh. */
async function openSettings() {
  await page.goto(`${relay.url}/`);
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Save changes' }).waitFor();
}

async function save(expected = 'Saved.') {
  await page.getByRole('button', { name: 'Save changes' }).click();
  try {
    await page.getByTestId('settings-status').filter({ hasText: expected }).waitFor({ timeout: 20_000 });
  } catch (error) {
    // Say what the page shows instead (a refusal's message, or still saving).
    const status = await page.getByTestId('settings-status').allTextContents();
    const button = await page.getByRole('button', { name: /^Sav/ }).allTextContents();
    throw new Error(`"${expected}" not shown; status ${JSON.stringify(status)}, buttons ${JSON.stringify(button)}`, {
      cause: error,
    });
  }
}

/** Screenshots of one section at both widths, scrolled to it by its jump link at each width. */
async function sectionShots(name: string, link: string) {
  await screenshots(page, name);
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.getByRole('link', { name: link, exact: true }).click();
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-${viewport.width}.png`) });
  }
  await page.setViewportSize(VIEWPORTS[0]);
}

/** Waits until the element with this id has the focus (the app moves it after rendering). */
const focused = (id: string) =>
  page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(id)}`, undefined, { timeout: 5000 });

const group = (name: string) => page.getByRole('group', { name, exact: true });
const config = async () => (await relay.api('GET', '/api/v1/config')).body;

describe('the settings screen', () => {
  it('adds an agent and a model; the new-chat pickers list them at once', async () => {
    await openSettings();
    await page.getByRole('button', { name: 'Add model' }).click();
    const model = group('Model 3');
    // The new row's first field has the focus: typing goes there.
    await focused('settings-models-2-id');
    await page.keyboard.type('model-c');
    await model.getByLabel('Name', { exact: true }).fill('Model C');
    await model.getByLabel('Description', { exact: true }).fill('The third one');
    await model.getByRole('button', { name: 'Add metadata' }).click();
    await model.getByLabel('Key', { exact: true }).fill('tier');
    await model.getByLabel('Value', { exact: true }).fill('cheap');

    await page.getByRole('button', { name: 'Add agent' }).click();
    const agent = group('Agent 3');
    await agent.getByLabel('ID', { exact: true }).fill('writer');
    await agent.getByLabel('Name', { exact: true }).fill('Writer');
    await agent.getByLabel('Description', { exact: true }).fill('Writes prose');
    await agent.getByLabel('Default model').selectOption('model-c');
    await save();

    const after = await config();
    expect(after.agents[2]).toEqual({
      id: 'writer',
      name: 'Writer',
      description: 'Writes prose',
      defaultModelId: 'model-c',
    });
    expect(after.models[2]).toEqual({
      id: 'model-c',
      name: 'Model C',
      description: 'The third one',
      metadata: { tier: 'cheap' },
    });

    // Without a reload: the app's configuration was refreshed.
    await page.getByRole('link', { name: 'New chat' }).click();
    await page.getByRole('heading', { name: 'New chat' }).waitFor();
    await page.getByLabel('Agent', { exact: true }).selectOption('writer');
    await expect(page.getByLabel('Model', { exact: true }).inputValue()).resolves.toBe('model-c');
    await expect(page.getByLabel('Model', { exact: true }).locator('option').allTextContents()).resolves.toEqual([
      'Model A',
      'Model B',
      'Model C',
    ]);
  });

  it('changes the default model for new chats (saved with the keyboard)', async () => {
    await openSettings();
    const select = page.getByLabel('Default model for new chats');
    await select.selectOption('model-b');
    // Enter in a text field submits the form.
    await group('Agent 1').getByLabel('Name', { exact: true }).press('Enter');
    await page.getByTestId('settings-status').filter({ hasText: 'Saved.' }).waitFor();
    expect((await config()).defaultModelIdForNewChats).toBe('model-b');

    await page.getByRole('link', { name: 'New chat' }).click();
    await page.getByLabel('Agent', { exact: true }).selectOption('assistant');
    await expect(page.getByLabel('Model', { exact: true }).inputValue()).resolves.toBe('model-b');
  });

  it('a read that does not show the saved change yet (another instance’s cache) is read again, never shown', async () => {
    await openSettings();
    // What a service instance whose configuration cache is up to 5 s old still answers (fault injected).
    const stale = (await relay.api('GET', '/api/v1/config')).text;
    let served = 0;
    await page.route('**/api/v1/config', async (route) => {
      if (route.request().method() !== 'GET' || served >= 2) return route.continue();
      served++;
      return route.fulfill({ status: 200, contentType: 'application/json', body: stale });
    });
    try {
      const description = group('Agent 2').getByLabel('Description', { exact: true });
      await description.fill('Writes and reviews code');
      await save();
      expect(served).toBe(2);
      await expect(description.inputValue()).resolves.toBe('Writes and reviews code');
      expect((await config()).agents[1].description).toBe('Writes and reviews code');
    } finally {
      await page.unroute('**/api/v1/config');
    }
  });

  it('a refused change shows the message at its field, focused; the form keeps the edits, the server is unchanged', async () => {
    const before = (await relay.api('GET', '/api/v1/config')).text;
    await openSettings();
    const sent: string[] = [];
    const watch = (request: { method(): string; url(): string }) => {
      if (request.method() === 'PATCH' && request.url().endsWith('/api/v1/config/admin')) sent.push(request.url());
    };
    page.on('request', watch);
    try {
      await page.getByRole('button', { name: 'Add agent' }).click();
      const agent = group('Agent 4');
      await agent.getByLabel('Name', { exact: true }).fill('Nameless');
      await page.getByRole('button', { name: 'Save changes' }).click();

      // The form says it itself, in words, at the field: nothing is sent.
      const id = agent.getByLabel('ID', { exact: true });
      const error = page.getByTestId('field-error');
      await error.waitFor();
      await expect(error.getAttribute('data-field')).resolves.toBe('agents.3.id');
      await expect(error.textContent()).resolves.toBe('Agent ID cannot be empty.');
      await expect(id.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(id.getAttribute('aria-describedby')).resolves.toBe(await error.getAttribute('id'));
      await focused('settings-agents-3-id');
      await expect(page.getByRole('alert').filter({ hasText: 'Nothing was saved' }).count()).resolves.toBe(1);
      await expect(agent.getByLabel('Name', { exact: true }).inputValue()).resolves.toBe('Nameless');
      expect(sent).toEqual([]);
      expect((await relay.api('GET', '/api/v1/config')).text).toBe(before);
      await screenshots(page, 'settings-empty-id');

      // Another rule, another field, one only the service checks: a push subject on localhost
      // (§7.7). Its message comes back at the field, in words too.
      await page.getByRole('button', { name: 'Remove agent 4' }).click();
      await page.getByLabel('Send web push notifications').check();
      await page.getByLabel('Subject').fill('mailto:me@localhost');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page
        .getByTestId('field-error')
        .filter({ hasText: /^The subject cannot contain localhost: push services refuse it\.$/ })
        .waitFor();
      expect(sent).toHaveLength(1);
      const subject = page.getByLabel('Subject');
      await expect(subject.getAttribute('aria-invalid')).resolves.toBe('true');
      await focused('settings-push-subject');
      await expect(page.getByTestId('field-error').getAttribute('data-field')).resolves.toBe('push.subject');
      await expect(page.getByTestId('settings-status').textContent()).resolves.not.toContain('Config validation error');
      expect((await relay.api('GET', '/api/v1/config')).text).toBe(before);
      await screenshots(page, 'settings-error');
    } finally {
      page.off('request', watch);
    }
  });

  it('each empty field says so at itself; a fixed one stops saying it; descriptions take several lines', async () => {
    await openSettings();
    await page.getByRole('button', { name: 'Add agent' }).click();
    await page.getByRole('button', { name: 'Add model' }).click();
    const agent = group('Agent 4');
    const model = page.getByTestId('model-row').last();
    // Descriptions are multi-line: a textarea, Enter makes a new line.
    const description = agent.getByLabel('Description', { exact: true });
    await expect(description.evaluate((el) => el.tagName)).resolves.toBe('TEXTAREA');
    await expect(model.getByLabel('Description', { exact: true }).evaluate((el) => el.tagName)).resolves.toBe(
      'TEXTAREA',
    );
    await description.fill('Plans trips.');
    await description.press('Enter');
    await description.pressSequentially('Books nothing without asking.');
    await model.getByLabel('Name', { exact: true }).fill('Unnamed model');
    await page.getByRole('button', { name: 'Save changes' }).click();

    const errors = page.getByTestId('field-error');
    await errors.first().waitFor();
    const shown = await errors.evaluateAll((els) => els.map((e) => [e.getAttribute('data-field'), e.textContent]));
    expect(shown).toEqual([
      ['agents.3.id', 'Agent ID cannot be empty.'],
      [expect.stringMatching(/^models\.\d+\.id$/), 'Model ID cannot be empty.'],
    ]);
    await page.getByTestId('settings-status').filter({ hasText: 'fix the 2 fields marked above' }).waitFor();
    await focused('settings-agents-3-id');

    // Fixing the agent's ID takes its message away; the model's stays until it is fixed too.
    await agent.getByLabel('ID', { exact: true }).fill('planner');
    await page
      .getByTestId('field-error')
      .and(page.locator('[data-field="agents.3.id"]'))
      .waitFor({ state: 'detached' });
    await expect(agent.getByLabel('ID', { exact: true }).getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(errors.count()).resolves.toBe(1);
    await model.getByLabel('ID', { exact: true }).fill('model-unnamed');
    await errors.first().waitFor({ state: 'detached' });
    await save();
    const saved = await config();
    expect(saved.agents.find((a: { id: string }) => a.id === 'planner')?.description).toBe(
      'Plans trips.\nBooks nothing without asking.',
    );
    // Put the instance back as the later tests expect it.
    await page.getByRole('button', { name: 'Remove agent 4' }).click();
    await page.getByRole('button', { name: `Remove model ${await page.getByTestId('model-row').count()}` }).click();
    await save();
  });

  it('auto-rename: Test calls the provider with the typed key and shows its answer; the key is stored, never shown', async () => {
    await openSettings();
    await page.getByLabel('Title new chats automatically').check();
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel('Model', { exact: true }).fill('gpt-5.4-nano');
    await page.getByLabel('API key', { exact: true }).fill('sk-typed-test-key');
    fake.reset();
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByTestId('auto-rename-test').filter({ hasText: 'OpenAI answered: the settings work.' }).waitFor();
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-typed-test-key');
    expect(fake.requests[0]!.body.model).toBe('gpt-5.4-nano');

    fake.answer = () => ({ status: 401, body: { error: { message: 'bad key' } } });
    await page.getByRole('button', { name: 'Test' }).click();
    const failure = page.getByRole('alert').filter({ hasText: 'Authentication failed: invalid API key. (401)' });
    await failure.waitFor();
    await sectionShots('settings-auto-rename', 'Auto-rename');
    fake.reset();

    await save();
    expect((await config()).autoRename).toEqual({
      enabled: true,
      provider: 'openai',
      modelId: 'gpt-5.4-nano',
      hasApiKey: true,
    });
    await page.reload();
    await page.getByRole('button', { name: 'Save changes' }).waitFor();
    await expect(page.getByLabel('API key', { exact: true }).inputValue()).resolves.toBe('');
    await expect(page.getByTestId('api-key-state').textContent()).resolves.toMatch(/^API key: stored;/);
    expect(await page.content()).not.toContain('sk-typed-test-key');
    // Test with the stored key: the field is blank, the service uses its own.
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByTestId('auto-rename-test').filter({ hasText: 'the settings work' }).waitFor();
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-typed-test-key');
  });

  it('a webhook with events and a signing secret: the secret signs deliveries and is never shown back', async () => {
    await openSettings();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const hook = group('Webhook 1');
    await hook.getByLabel('URL').fill(receiverUrl);
    await hook.getByLabel('chat.created').check();
    await hook.getByLabel('message.created').check();
    await hook.getByLabel('Timeout (ms)').fill('3000');
    await hook.getByLabel('Signing secret', { exact: true }).fill('whsec-write-only-1');
    await hook.getByLabel('Headers', { exact: true }).fill('X-Relay-Token: header-write-only-2');
    await save();

    expect((await config()).hooks).toEqual([
      {
        url: receiverUrl,
        events: ['chat.created', 'message.created'],
        timeoutMs: 3000,
        maxRetries: 3,
        hasSigningSecret: true,
        hasHeaders: true,
      },
    ]);
    await page.reload();
    await page.getByRole('button', { name: 'Save changes' }).waitFor();
    const reloaded = group('Webhook 1');
    await expect(reloaded.getByLabel('URL').inputValue()).resolves.toBe(receiverUrl);
    await expect(reloaded.getByLabel('Signing secret', { exact: true }).inputValue()).resolves.toBe('');
    await expect(reloaded.getByTestId('signing-secret-state').textContent()).resolves.toBe('Signing secret: stored');
    await expect(reloaded.getByTestId('headers-state').textContent()).resolves.toBe('Headers: stored');
    await expect(reloaded.getByLabel('message.created').isChecked()).resolves.toBe(true);
    const html = await page.content();
    await sectionShots('settings-webhooks', 'Webhooks');
    expect(html).not.toContain('whsec-write-only-1');
    expect(html).not.toContain('header-write-only-2');

    // Saving an unrelated change keeps them: the next delivery is signed with the stored secret.
    await reloaded.getByLabel('Max retries').fill('2');
    await save();
    const arrived = new Promise<Delivery>((ok) => (delivered = ok));
    await relay.api('POST', '/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a' });
    const delivery = await arrived;
    expect(JSON.parse(delivery.body).type).toBe('chat.created');
    expect(delivery.headers['x-relay-token']).toBe('header-write-only-2');
    const mac = createHmac('sha256', 'whsec-write-only-1').update(delivery.body).digest('hex');
    expect(delivery.headers['x-opengram-signature']).toBe(`sha256=${mac}`);
  });

  it('screenshots at both widths', async () => {
    // The header with its Settings link (on a phone: the inbox screen's header).
    await page.goto(`${relay.url}/`);
    await page.getByRole('link', { name: 'Settings' }).waitFor();
    await screenshots(page, 'settings-header');
    await openSettings();
    await screenshots(page, 'settings');
  });

  it('a secret the deployment sets (OPENGRAM_INSTANCE_SECRET) is not offered for rotation or turning off', async () => {
    const deployed = await startRelay();
    const other = await holder.browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const tab = await other.newPage();
      await tab.goto(`${deployed.url}/settings`);
      await tab.getByLabel('Instance secret').fill(deployed.secret!);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('button', { name: 'Save changes' }).waitFor();
      await tab.getByTestId('secret-set-by-deployment').waitFor();
      await expect(tab.getByRole('button', { name: 'Rotate secret' }).count()).resolves.toBe(0);
      await expect(tab.getByLabel('New instance secret').count()).resolves.toBe(0);
      await expect(tab.getByLabel('Require the instance secret').isDisabled()).resolves.toBe(true);
      await expect(tab.getByLabel('Require the instance secret').isChecked()).resolves.toBe(true);
    } finally {
      await other.close();
      await deployed.stop();
    }
  });

  it('rotating the secret signs this browser out; the old secret is refused, the new one works, the old is never shown', async () => {
    const old = relay.secret!;
    await openSettings();
    expect(await page.content()).not.toContain(old);
    await page.getByRole('button', { name: 'Generate' }).click();
    const input = page.getByLabel('New instance secret');
    const fresh = await input.inputValue();
    expect(fresh).toMatch(/^og_[A-Za-z0-9_-]{40}$/);
    // Shown this once, as text, to copy.
    await expect(input.getAttribute('type')).resolves.toBe('text');
    await expect(
      page.getByText('Rotating the secret signs out every browser, this one included').count(),
    ).resolves.toBe(1);
    expect(await page.content()).not.toContain(old);
    await page.getByRole('button', { name: 'Rotate secret' }).click();

    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.content()).not.toContain(old);
    expect(await page.content()).not.toContain(fresh);

    const read = (secret: string) =>
      fetch(`${relay.url}/api/v1/chats`, { headers: { authorization: `Bearer ${secret}` } }).then((r) => r.status);
    expect(await read(old)).toBe(401);
    expect(await read(fresh)).toBe(200);
    // This browser's old session is refused too.
    const probe = await page.evaluate(async () => {
      const res = await fetch('/api/v1/auth/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return res.status;
    });
    expect(probe).toBe(401);

    await page.getByLabel('Instance secret').fill(old);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong secret' }).waitFor();
    await signIn(fresh);
    await openSettings();
  });
});
