/**
 * Media in the web app (issue 27 item 1), in Chromium against `npm start`: attaching by the
 * picker, by a drop on the chat and by paste, each file a chip with its progress and a remove
 * button; small files in one request, files above the one-request ceiling through an upload
 * session whose form goes to the page's own origin (the CSP allows no other), up to a 40 MB
 * video; refusals before uploading (type, size) and from the service (415); removal deletes an
 * uploaded medium no message holds; thumbnails with the original in a dialog, inline audio that
 * plays, download chips; a voice note recorded from Chromium's fake microphone, stored as audio.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page, Route } from 'playwright-core';
import sharp from 'sharp';
import { FAKE_MICROPHONE_ARGS, screenshots, useBrowser } from './support/browser.js';
import { eventually } from './support/poll.js';
import { seedChat, sessionCookies, useRelay } from './support/relay.js';
import { textContrast } from './support/contrast.js';
import { wav } from './support/screens.js';

const ALLOWED = ['image/*', 'audio/*', 'video/*', 'text/plain', 'application/pdf'];
const relay = useRelay({ config: { allowedMimeTypes: ALLOWED } });
const holder = useBrowser({ args: [...FAKE_MICROPHONE_ARGS, '--autoplay-policy=no-user-gesture-required'] });

let files: string;
let context: BrowserContext;
let png: Buffer;

/** A file of `bytes` bytes on disk (setInputFiles hands paths to the browser as they are). */
function bigFile(name: string, bytes: number): string {
  const path = join(files, name);
  const head = Buffer.alloc(Math.min(bytes, 1024 * 1024), 0x5a);
  writeFileSync(path, head);
  truncateSync(path, bytes);
  return path;
}

beforeAll(async () => {
  files = mkdtempSync(join(tmpdir(), 'chat-relay-media-e2e-'));
  png = await sharp({
    create: { width: 900, height: 600, channels: 3, background: { r: 30, g: 120, b: 200 } },
  })
    .composite([
      {
        input: await sharp({ create: { width: 300, height: 200, channels: 3, background: '#f5b400' } })
          .png()
          .toBuffer(),
        left: 300,
        top: 200,
      },
    ])
    .png()
    .toBuffer();
  context = await holder.browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addCookies(await sessionCookies(relay));
}, 60_000);

afterAll(async () => {
  await context?.close();
  if (files) rmSync(files, { recursive: true, force: true });
});

interface Opened {
  page: Page;
  chat: string;
  /** "METHOD /path" of every request the page made. */
  requests: string[];
  /** Every aria-valuenow the progress bars showed, by file name. */
  progress: () => Promise<Record<string, number[]>>;
}

/** In the page: records every aria-valuenow the progress bars take (a MutationObserver: nothing sampled). */
const RECORD_PROGRESS = `(() => {
  const seen = {};
  window.progressSeen = seen;
  const record = (bar) => {
    const name = (bar.getAttribute('aria-label') || '').replace(/^Uploading /, '');
    (seen[name] = seen[name] || []).push(Number(bar.getAttribute('aria-valuenow')));
  };
  new MutationObserver((mutations) => {
    for (const m of mutations) {
      if (m.type === 'attributes' && m.target.matches('progress')) record(m.target);
      for (const node of m.addedNodes) if (node.querySelectorAll) node.querySelectorAll('progress').forEach(record);
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['aria-valuenow'] });
})()`;

/** In the page: a drop of one text file on `target`, with a DataTransfer built there. */
const dropScript = (selector: string) => `(() => {
  const data = new DataTransfer();
  data.items.add(new File(['dropped text'], 'dropped.txt', { type: 'text/plain' }));
  const target = document.querySelector(${JSON.stringify(selector)});
  for (const type of ['dragenter', 'dragover', 'drop'])
    target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
})()`;

/** In the page: a paste of a PNG (clipboard data with one file) into the message box. */
const pasteScript = (base64: string) => `(() => {
  const bytes = Uint8Array.from(atob(${JSON.stringify(base64)}), (c) => c.charCodeAt(0));
  const data = new DataTransfer();
  data.items.add(new File([bytes], 'pasted.png', { type: 'image/png' }));
  document.querySelector('#composer-text')
    .dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
})()`;

async function openChat(): Promise<Opened> {
  const chat = await seedChat(relay, { title: 'Media' });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(`${r.method()} ${new URL(r.url()).pathname}`));
  await page.goto(`${relay.url}/chats/${chat}`);
  await page.getByRole('textbox', { name: 'Message', exact: true }).waitFor();
  // Records the progress bars' values as they change (no sampling: every mutation).
  await page.evaluate(RECORD_PROGRESS);
  const progress = () => page.evaluate<Record<string, number[]>>('window.progressSeen');
  return { page, chat, requests, progress };
}

const chip = (page: Page, name: string) => page.getByTestId('pending-attachment').filter({ hasText: name });
const doneChip = (page: Page, name: string) =>
  page.locator('[data-testid="pending-attachment"][data-status="done"]').filter({ hasText: name });

async function mediaOf(chat: string): Promise<Record<string, any>[]> {
  return (await relay.api('GET', `/api/v1/chats/${chat}/media`)).body.data;
}

async function send(page: Page, text = ''): Promise<void> {
  if (text) await page.getByRole('textbox', { name: 'Message', exact: true }).fill(text);
  const button = page.getByRole('button', { name: 'Send', exact: true });
  await eventually(() => button.isEnabled(), true);
  await button.click();
}

describe('attaching', () => {
  it('by the picker: chips with progress and remove; sent with the message as trace.mediaIds', async () => {
    const { page, chat, progress, requests } = await openChat();
    await page.getByRole('button', { name: 'Attach files', exact: true }).waitFor();
    await page.getByTestId('attach-input').setInputFiles([
      { name: 'photo.png', mimeType: 'image/png', buffer: png },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('release notes\n') },
    ]);
    for (const name of ['photo.png', 'notes.txt']) {
      await doneChip(page, name).waitFor();
      await expect(
        chip(page, name)
          .getByRole('button', { name: `Remove ${name}` })
          .isVisible(),
      ).resolves.toBe(true);
    }
    const seen = await progress();
    expect(seen['photo.png']!.at(-1)).toBe(100);
    expect(seen['notes.txt']!.at(-1)).toBe(100);
    // Small files: one request each, no session.
    expect(requests.filter((r) => r === `POST /api/v1/chats/${chat}/media`)).toHaveLength(2);
    expect(requests.some((r) => r.includes('/media/uploads'))).toBe(false);

    await send(page, 'Here they are');
    const message = page.locator('[data-testid="message"][data-status="sent"]').filter({ hasText: 'Here they are' });
    await message.locator('[data-testid="attachment"][data-kind="image"] img').waitFor();
    await expect(chip(page, 'photo.png').count()).resolves.toBe(0);
    const messageId = await message.getAttribute('data-message-id');
    const stored = await mediaOf(chat);
    expect(stored.map((m) => [m.filename, m.kind, m.byte_size, m.message_id]).sort()).toEqual([
      ['notes.txt', 'file', 14, messageId],
      ['photo.png', 'image', png.length, messageId],
    ]);
    const messages = (await relay.api('GET', `/api/v1/chats/${chat}/messages`)).body.data;
    expect(messages[0].trace.mediaIds.sort()).toEqual(stored.map((m) => m.id).sort());
    await page.close();
  });

  it('by a drop on the chat and by paste; a message of attachments only', async () => {
    const { page, chat } = await openChat();
    await page.evaluate(dropScript('[role="log"][aria-label="Messages"]'));
    await doneChip(page, 'dropped.txt').waitFor();
    await page.evaluate(pasteScript(png.toString('base64')));
    await doneChip(page, 'pasted.png').waitFor();
    // The pasted file did not become text.
    await expect(page.getByRole('textbox', { name: 'Message', exact: true }).inputValue()).resolves.toBe('');
    await send(page);
    await page.locator('[data-testid="message"][data-status="sent"] [data-testid="attachment"]').nth(1).waitFor();
    const messages = (await relay.api('GET', `/api/v1/chats/${chat}/messages`)).body.data;
    expect([messages.length, messages[0].content_final, messages[0].trace.mediaIds.length]).toEqual([1, null, 2]);
    expect((await mediaOf(chat)).map((m) => m.filename).sort()).toEqual(['dropped.txt', 'pasted.png']);
    await page.close();
  });

  it('removing an uploaded file deletes its medium; Send waits for uploads; removing one mid-upload stores nothing', async () => {
    const { page, chat, requests } = await openChat();
    await page
      .getByTestId('attach-input')
      .setInputFiles([{ name: 'draft.txt', mimeType: 'text/plain', buffer: Buffer.from('x') }]);
    await doneChip(page, 'draft.txt').waitFor();
    const [medium] = await mediaOf(chat);
    await page.getByRole('button', { name: 'Remove draft.txt', exact: true }).click();
    await expect(chip(page, 'draft.txt').count()).resolves.toBe(0);
    await eventually(async () => (await mediaOf(chat)).length, 0);
    expect(requests).toContain(`DELETE /api/v1/media/${medium!.id}`);

    // A large file held on its way to storage, then removed: the upload stops, nothing is finalized or stored.
    let held: Route | undefined;
    await page.route('**/media-upload', (route) => {
      held = route;
    });
    await page.getByTestId('attach-input').setInputFiles(bigFile('held.mp4', 5 * 1024 * 1024));
    await chip(page, 'held.mp4').getByRole('progressbar').waitFor();
    await eventually(async () => held !== undefined, true);
    // Send waits for every upload, text or not.
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('with the clip');
    await expect(page.getByRole('button', { name: 'Send', exact: true }).isDisabled()).resolves.toBe(true);
    await page.getByRole('textbox', { name: 'Message', exact: true }).press('Enter');
    await expect(page.getByTestId('message').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Remove held.mp4', exact: true }).click();
    await expect(chip(page, 'held.mp4').count()).resolves.toBe(0);
    await held!.abort().catch(() => {});
    expect(requests.filter((r) => r.endsWith('/complete'))).toEqual([]);
    expect(await mediaOf(chat)).toEqual([]);
    await page.close();
  });
});

describe('refusals', () => {
  it('a type outside allowedMimeTypes and a file above maxUploadBytes say why before any upload', async () => {
    const { page, chat, requests } = await openChat();
    const tooBig = bigFile('huge.mp4', 50_000_001);
    await page
      .getByTestId('attach-input')
      .setInputFiles([{ name: 'setup.exe', mimeType: 'application/x-msdownload', buffer: Buffer.from('MZ') }]);
    await page.getByTestId('attach-input').setInputFiles(tooBig);
    const alerts = page.getByRole('alert');
    await eventually(
      () => alerts.allInnerTexts(),
      [
        'setup.exe cannot be attached: files of type application/x-msdownload are not allowed',
        'huge.mp4 cannot be attached: it is larger than the 47.7 MB limit',
      ],
    );
    expect(requests.filter((r) => r.startsWith('POST') && r.includes('/media'))).toEqual([]);
    // Nothing to send; each refusal goes with its remove button.
    await expect(page.getByRole('button', { name: 'Send', exact: true }).isDisabled()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Remove setup.exe', exact: true }).click();
    await page.getByRole('button', { name: 'Remove huge.mp4', exact: true }).click();
    await expect(alerts.count()).resolves.toBe(0);
    expect(await mediaOf(chat)).toEqual([]);
    await page.close();
  });

  it("the service's 415 (an image that does not decode) names the file and the reason; nothing is stored", async () => {
    const { page, chat } = await openChat();
    await page
      .getByTestId('attach-input')
      .setInputFiles([{ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('<html>not an image</html>') }]);
    const alert = chip(page, 'fake.png').getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toBe(
      'fake.png cannot be attached: its type is not accepted (file content is not a valid image.)',
    );
    await page.getByRole('button', { name: 'Remove fake.png', exact: true }).click();
    await expect(chip(page, 'fake.png').count()).resolves.toBe(0);
    expect(await mediaOf(chat)).toEqual([]);
    await page.close();
  });
});

describe('large files through upload sessions', () => {
  async function uploadLarge(name: string, bytes: number) {
    const opened = await openChat();
    const { page, chat, requests } = opened;
    const path = bigFile(name, bytes);
    // How long each request of the upload took, from its start to the end of its answer.
    const took: Record<string, number> = {};
    page.on('requestfinished', (r) => {
      const timing = r.timing();
      took[new URL(r.url()).pathname.replace(/uploads\/[^/]+\/complete$/, 'uploads/{id}/complete')] =
        timing.responseEnd;
    });
    const began = Date.now();
    await page.getByTestId('attach-input').setInputFiles(path);
    await chip(page, name).getByRole('progressbar').waitFor();
    await doneChip(page, name).waitFor({ timeout: 120_000 });
    const seconds = (Date.now() - began) / 1000;
    const paths = requests.filter((r) => r.startsWith('POST') && r.includes('/media'));
    expect(paths).toEqual([
      `POST /api/v1/chats/${chat}/media/uploads`,
      'POST /media-upload',
      expect.stringMatching(new RegExp(`^POST /api/v1/chats/${chat}/media/uploads/[^/]+/complete$`)),
    ]);
    const [medium] = await mediaOf(chat);
    expect([medium!.filename, medium!.byte_size, medium!.content_type, medium!.message_id]).toEqual([
      name,
      bytes,
      'video/mp4',
      null,
    ]);
    return { ...opened, seconds, medium: medium!, took };
  }

  it('a 6 MB video: session, the form to this origin, finalize; sent as a download chip', async () => {
    const { page, chat, progress } = await uploadLarge('clip.mp4', 6 * 1024 * 1024);
    expect((await progress())['clip.mp4']!.at(-1)).toBe(100);
    await send(page, 'The clip');
    const file = page.locator(
      '[data-testid="message"][data-status="sent"] [data-testid="attachment"][data-kind="file"]',
    );
    await file.waitFor();
    expect(await file.innerText()).toBe('clip.mp4\n6.0 MB · video/mp4');
    expect((await mediaOf(chat))[0]!.message_id).not.toBeNull();
    await page.close();
  });

  it('a 40 MB video uploads from the browser (throughput reported)', async () => {
    const bytes = 40 * 1024 * 1024;
    const { page, progress, seconds, took, chat } = await uploadLarge('talk.mp4', bytes);
    // Progress moved through the upload, not only at its end.
    const values = (await progress())['talk.mp4']!;
    expect(values.some((v) => v > 0 && v < 100)).toBe(true);
    expect(values.at(-1)).toBe(100);
    process.stderr.write(
      `media e2e: 40 MiB through the session path in ${seconds.toFixed(2)} s = ` +
        `${(bytes / 1024 / 1024 / seconds).toFixed(1)} MiB/s (picker to finalized); session ` +
        `${took[`/api/v1/chats/${chat}/media/uploads`]?.toFixed(0)} ms, form POST to /media-upload ` +
        `${took['/media-upload']?.toFixed(0)} ms, finalize ` +
        `${took[`/api/v1/chats/${chat}/media/uploads/{id}/complete`]?.toFixed(0)} ms\n`,
    );
    await page.close();
  }, 180_000);
});

describe('display', () => {
  it('thumbnail with the original in a dialog (Escape and Close), inline audio that plays, file chips', async () => {
    const { page } = await openChat();
    await page.getByTestId('attach-input').setInputFiles([
      { name: 'photo.png', mimeType: 'image/png', buffer: png },
      { name: 'tone.wav', mimeType: 'audio/wav', buffer: wav() },
      { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4 tiny') },
    ]);
    for (const name of ['photo.png', 'tone.wav', 'report.pdf']) await doneChip(page, name).waitFor();
    await send(page, 'Photo, tone and report');
    const thumb = page.locator(
      '[data-testid="message"][data-status="sent"] [data-testid="attachment"][data-kind="image"] img',
    );
    await thumb.waitFor();
    await eventually(() => thumb.evaluate((img: any) => [img.complete, img.naturalWidth]), [true, 512]);
    expect(await thumb.getAttribute('src')).toMatch(/\/thumbnail$/);

    const view = page
      .locator('[data-testid="message"][data-status="sent"]')
      .getByRole('button', { name: 'View photo.png', exact: true });
    await view.click();
    const dialog = page.getByRole('dialog', { name: 'photo.png' });
    await dialog.waitFor();
    const full = dialog.getByTestId('full-image');
    await eventually(() => full.evaluate((img: any) => [img.complete, img.naturalWidth]), [true, 900]);
    // The bar's controls read against its dark ground (Close was white on the light panel's white).
    for (const control of [
      dialog.getByRole('button', { name: 'Close', exact: true }),
      dialog.getByRole('link', { name: 'Download', exact: true }),
    ])
      expect(await textContrast(control)).toBeGreaterThanOrEqual(4.5);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await view.click();
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });

    const audio = page.locator(
      '[data-testid="message"][data-status="sent"] [data-testid="attachment"][data-kind="audio"] audio',
    );
    await audio.waitFor();
    await eventually(() => audio.evaluate((a: any) => a.readyState >= 1 && a.duration > 0), true);
    await audio.evaluate((a: any) => a.play());
    await eventually(() => audio.evaluate((a: any) => a.currentTime > 0), true);
    await audio.evaluate((a: any) => a.pause());

    const file = page.locator(
      '[data-testid="message"][data-status="sent"] [data-testid="attachment"][data-kind="file"]',
    );
    expect(await file.innerText()).toBe('report.pdf\n13 B · application/pdf');
    expect(await file.getAttribute('download')).toBe('report.pdf');

    // A refusal next to an upload in progress, for the screenshots.
    await page.getByTestId('attach-input').setInputFiles([
      { name: 'setup.exe', mimeType: 'application/x-msdownload', buffer: Buffer.from('MZ') },
      { name: 'more.txt', mimeType: 'text/plain', buffer: Buffer.from('more') },
    ]);
    await doneChip(page, 'more.txt').waitFor();
    await screenshots(page, 'media-chat');
    await page.close();
  });
});

describe('large originals', () => {
  it('an image and an audio file over 4 MB show: the 307 to the media bucket is allowed by the CSP', async () => {
    const { page, chat } = await openChat();
    // Stored uncompressed: 1,300 × 1,300 × 3 bytes is 5 MB; and 330 s of 16 kB/s WAV, 5.3 MB.
    const big = await sharp({ create: { width: 1300, height: 1300, channels: 3, background: '#3a7d44' } })
      .png({ compressionLevel: 0 })
      .toBuffer();
    const long = wav(330);
    const limit = 4 * 1024 * 1024;
    expect([big.length > limit, long.length > limit]).toEqual([true, true]);
    const redirects: string[] = [];
    const blocked: string[] = [];
    page.on('response', (r) => {
      if (r.status() === 307)
        redirects.push(`${new URL(r.url()).pathname} -> ${new URL(r.headers().location!).origin}`);
    });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    await page.getByTestId('attach-input').setInputFiles([
      { name: 'poster.png', mimeType: 'image/png', buffer: big },
      { name: 'meeting.wav', mimeType: 'audio/wav', buffer: long },
    ]);
    for (const name of ['poster.png', 'meeting.wav']) await doneChip(page, name).waitFor({ timeout: 60_000 });
    await send(page, 'Large poster and recording');
    const sent = page.locator('[data-testid="message"][data-status="sent"]').filter({ hasText: 'Large poster' });
    await sent.getByRole('button', { name: 'View poster.png', exact: true }).click();
    const full = page.getByRole('dialog', { name: 'poster.png' }).getByTestId('full-image');
    await eventually(() => full.evaluate((img: any) => [img.complete, img.naturalWidth]), [true, 1300]);
    await screenshots(page, 'media-large-original');
    await page.keyboard.press('Escape');
    const audio = sent.locator('[data-testid="attachment"][data-kind="audio"] audio');
    await eventually(() => audio.evaluate((a: any) => a.readyState >= 1 && Math.round(a.duration)), 330);
    // Both came from the bucket after a 307 (not inline from the function), and nothing was refused.
    const bucket = new URL(String(redirects[0]?.split(' -> ')[1])).origin;
    expect(bucket).not.toBe(new URL(relay.url).origin);
    const idOf = Object.fromEntries((await mediaOf(chat)).map((m) => [m.filename, m.id]));
    expect(new Set(redirects)).toEqual(
      new Set([
        `/api/v1/files/${idOf['poster.png']} -> ${bucket}`,
        `/api/v1/files/${idOf['meeting.wav']} -> ${bucket}`,
      ]),
    );
    expect(blocked).toEqual([]);
    await page.close();
  }, 120_000);
});

describe('downloads are sandboxed (issue 33 item 2)', () => {
  it('an HTML page uploaded as audio runs nothing when opened from /files, and a list type is refused', async () => {
    const chat = await seedChat(relay, { title: 'Sandbox' });
    const html =
      `<html><body><form id=f method=post action="/api/v1/chats/${chat}/archive"></form>` +
      `<script>document.title = 'ran'; fetch('/api/v1/chats/${chat}/archive', { method: 'POST' }); ` +
      `document.getElementById('f').submit();</script></body></html>`;
    const base64Data = Buffer.from(html).toString('base64');
    const refused = await relay.api('POST', `/api/v1/chats/${chat}/media`, {
      fileName: 'page.mp3',
      contentType: 'audio/mpeg;,text/html',
      base64Data,
    });
    expect([refused.status, refused.body.error.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    // Declared as audio (allowed): served as audio/mpeg, inline, nosniff and sandboxed.
    const stored = await relay.api('POST', `/api/v1/chats/${chat}/media`, {
      fileName: 'page.mp3',
      contentType: 'audio/mpeg',
      base64Data,
    });
    expect(stored.status).toBe(201);
    const page = await context.newPage();
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() !== 'GET') posts.push(`${r.method()} ${r.url()}`);
    });
    const res = await page.goto(`${relay.url}/api/v1/files/${stored.body.id}`);
    expect([res?.status(), res?.headers()['content-type'], res?.headers()['x-content-type-options']]).toEqual([
      200,
      'audio/mpeg',
      'nosniff',
    ]);
    expect(res?.headers()['content-security-policy']).toMatch(/; sandbox$/);
    await page.waitForTimeout(1000);
    expect(await page.title()).not.toBe('ran');
    expect(posts).toEqual([]);
    expect((await relay.api('GET', `/api/v1/chats/${chat}`)).body.is_archived).toBe(false);
    await page.close();
  });
});

describe('voice notes', () => {
  it('records from the microphone with elapsed time, Stop attaches it, sent and stored as audio', async () => {
    const { page, chat } = await openChat();
    await page.getByRole('button', { name: 'Record voice note', exact: true }).click();
    const timer = page.getByRole('timer', { name: 'Recording time' });
    await timer.waitFor();
    await page.getByRole('timer').filter({ hasText: '0:01' }).waitFor();
    await screenshots(page, 'media-recording');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    const note = page
      .locator('[data-testid="pending-attachment"][data-status="done"]')
      .filter({ hasText: 'voice-note-' });
    await note.waitFor();
    await send(page);
    const audio = page.locator(
      '[data-testid="message"][data-status="sent"] [data-testid="attachment"][data-kind="audio"] audio',
    );
    await audio.waitFor();
    const [medium] = await mediaOf(chat);
    expect([medium!.kind, medium!.content_type, medium!.filename]).toEqual([
      'audio',
      'audio/webm',
      expect.stringMatching(/^voice-note-[\d-]+\.webm$/),
    ]);
    expect(medium!.byte_size).toBeGreaterThan(1000);
    expect(medium!.message_id).not.toBeNull();

    // Cancel keeps nothing.
    await page.getByRole('button', { name: 'Record voice note', exact: true }).click();
    await timer.waitFor();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('button', { name: 'Record voice note', exact: true }).waitFor();
    await expect(page.getByTestId('pending-attachment').count()).resolves.toBe(0);
    expect(await mediaOf(chat)).toHaveLength(1);
    await page.close();
  });
});
