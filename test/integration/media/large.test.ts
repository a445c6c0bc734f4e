/**
 * Files beyond one request (docs/architecture.md "Large files"; contract §8.5, §13 items 1–2), with the
 * default 50 MB limit: direct uploads over what one request carries answer 413 in both body
 * forms; an upload session's presigned POST and its finalize create the medium (a 6 MB file,
 * and an image with its thumbnail); finalize refuses a file of the wrong size or type or an
 * image that does not decode, deleting it; sessions check what is declared (size, SVG, chat,
 * message); a large original downloads through a 307 to a presigned URL with the same
 * headers and byte ranges. Storage enforces the POST policy (size and type, as S3 does; the
 * local front in local/s3.ts checks it), so finalize's own checks are exercised with objects
 * put around the policy.
 */
import { describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { oneAgentConfig, rehearsalAssembly, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { answerProblem } from '../../support/openapi-check.js';
import { putAround, storedKeys } from './support.js';

const api = useApi({ config: oneAgentConfig });

const newChat = async (): Promise<string> =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
const openSession = (chatId: string, body: Record<string, unknown>) =>
  api.post(`/api/v1/chats/${chatId}/media/uploads`, body);
const finalize = (chatId: string, uploadId: string) =>
  api.post(`/api/v1/chats/${chatId}/media/uploads/${uploadId}/complete`);

/** Sends the file to storage as a browser would: the session's fields, then the file. */
async function postToStorage(
  session: { url: string; fields: Record<string, string> },
  bytes: Buffer,
  type?: string,
): Promise<number> {
  const form = new FormData();
  for (const [k, v] of Object.entries(session.fields)) form.append(k, k === 'Content-Type' && type ? type : v);
  form.append('file', new Blob([bytes]), 'upload');
  return (await fetch(session.url, { method: 'POST', body: form })).status;
}

/** 20 MB: beyond one request, and beyond the emulator's own body limit (the front stores it in parts). */
const sixMb = Buffer.alloc(20 * 1024 * 1024, 7);
sixMb.write('%PDF-1.7 large file', 0);

describe('limits', () => {
  it(
    'reports 50 MB in all and what one request carries, and answers 413 to direct uploads beyond it in both ' + 'forms',
    async () => {
      const cfg = (await api.get('/api/v1/config')).body;
      expect([cfg.maxUploadBytes, cfg.directUploadMaxBytes]).toEqual([50_000_000, 4_194_304]);
      const chat = await newChat();
      const over = Buffer.alloc(4_194_305, 1);
      const json = await api.post(`/api/v1/chats/${chat}/media`, {
        fileName: 'big.bin',
        contentType: 'application/octet-stream',
        base64Data: over.toString('base64'),
      });
      expect([json.status, json.body.error]).toEqual([
        413,
        {
          code: 'PAYLOAD_TOO_LARGE',
          message: 'file exceeds maxUploadBytes.',
          details: { field: 'file', maxUploadBytes: 4_194_304 },
        },
      ]);
      const form = new FormData();
      form.append('file', new Blob([over]), 'big.bin');
      const multipart = await fetch(`${api.url}/api/v1/chats/${chat}/media`, { method: 'POST', body: form });
      expect([multipart.status, ((await multipart.json()) as { error: { message: string } }).error.message]).toEqual([
        413,
        'file exceeds maxUploadBytes.',
      ]);
    },
  );
});

describe('upload sessions', () => {
  it(
    'a 20 MB file: session, POST to storage, finalize → the medium; downloads redirect with the same headers and ' +
      'ranges',
    async () => {
      const chat = await newChat();
      const opened = await openSession(chat, {
        fileName: 'big report.pdf',
        contentType: 'application/pdf',
        byteSize: sixMb.length,
      });
      expect(opened.status).toBe(201);
      expect(opened.body).toEqual({
        uploadId: expect.any(String),
        url: expect.any(String),
        fields: expect.objectContaining({ key: `pending/${chat}/${opened.body.uploadId}` }),
        expiresAt: expect.any(String),
        maxUploadBytes: 50_000_000,
      });
      expect(await postToStorage(opened.body, sixMb)).toBeLessThan(300);
      const done = await finalize(chat, opened.body.uploadId);
      expect(done.status).toBe(201);
      expect(done.body).toMatchObject({
        chat_id: chat,
        filename: 'big_report.pdf',
        content_type: 'application/pdf',
        byte_size: sixMb.length,
        kind: 'file',
        thumbnail_path: null,
        message_id: null,
      });
      expect(await storedKeys('pending/')).toEqual([]);
      // Finalizing again answers the same medium.
      expect((await finalize(chat, opened.body.uploadId)).body).toEqual(done.body);

      const redirect = await fetch(`${api.url}/api/v1/files/${done.body.id}`, { redirect: 'manual' });
      expect(redirect.status).toBe(307);
      const answer = { status: 307, headers: redirect.headers, body: undefined, text: await redirect.text() };
      expect(answerProblem('GET', `/api/v1/files/${done.body.id}`, answer)).toBeUndefined();
      const location = redirect.headers.get('location')!;
      expect(location).toContain(done.body.storage_path);
      const whole = await fetch(location);
      expect([
        whole.status,
        whole.headers.get('content-type'),
        whole.headers.get('content-disposition'),
        whole.headers.get('cache-control'),
        whole.headers.get('x-content-type-options'),
        whole.headers.get('content-security-policy'),
      ]).toEqual([
        200,
        'application/pdf',
        'attachment; filename="big_report.pdf"',
        'private, max-age=86400',
        'nosniff',
        "default-src 'none'; sandbox",
      ]);
      expect(Buffer.from(await whole.arrayBuffer()).equals(sixMb)).toBe(true);
      // Followed with a Range (as clients follow redirects): 206 and 416 come from storage.
      const part = await fetch(`${api.url}/api/v1/files/${done.body.id}`, { headers: { range: 'bytes=0-7' } });
      expect([part.status, part.headers.get('content-range'), await part.text()]).toEqual([
        206,
        `bytes 0-7/${sixMb.length}`,
        '%PDF-1.7',
      ]);
      const past = await fetch(`${api.url}/api/v1/files/${done.body.id}`, {
        headers: { range: `bytes=${sixMb.length}-` },
      });
      expect(past.status).toBe(416);
      // Checked before redirecting: a bad Range is ours to refuse.
      expect(
        (
          await fetch(`${api.url}/api/v1/files/${done.body.id}`, {
            headers: { range: 'bytes=1-2,4-5' },
            redirect: 'manual',
          })
        ).status,
      ).toBe(400);
    },
  );

  it(
    "a page of the service's own origin posts to that origin (its CSP allows no other), which stores the file; " +
      'other clients post to storage itself',
    async () => {
      const chat = await newChat();
      const bytes = Buffer.alloc(5 * 1024 * 1024, 3);
      const declared = { fileName: 'clip.mp4', contentType: 'video/mp4', byteSize: bytes.length };
      // On a deployment the distribution serves viewers over HTTPS only, so a page's Origin is https;
      // the rehearsal's viewer side is plain HTTP on loopback (README: TLS is not rehearsed), its
      // edge standing in for TLS termination: the page's https URL is reached through it.
      const pageOrigin = rehearsalAssembly() ? api.url.replace(/^http:/, 'https:') : api.url;
      const throughEdge = (session: { url: string; fields: Record<string, string> }) => ({
        ...session,
        url: session.url.replace(pageOrigin, api.url),
      });
      const headers = { origin: pageOrigin };
      const page = await api.post(`/api/v1/chats/${chat}/media/uploads`, declared, { headers });
      expect(page.body.url).toBe(`${pageOrigin}/media-upload`);
      expect(await postToStorage(throughEdge(page.body), bytes)).toBe(204);
      const media = await finalize(chat, page.body.uploadId);
      expect([media.status, media.body.byte_size, media.body.content_type]).toEqual([201, bytes.length, 'video/mp4']);
      // The same policy holds there: another size is refused and stores nothing.
      const again = await api.post(`/api/v1/chats/${chat}/media/uploads`, declared, { headers });
      expect(again.body.url).toBe(`${pageOrigin}/media-upload`);
      expect(await postToStorage(throughEdge(again.body), bytes.subarray(1))).toBe(400);
      expect(await storedKeys(`pending/${chat}/`)).toEqual([]);
      // A foreign origin, or none (an agent), gets the bucket's own URL.
      for (const headers of [{ origin: 'https://elsewhere.example' }, {}] as Record<string, string>[]) {
        const other = await api.post(`/api/v1/chats/${chat}/media/uploads`, declared, { headers });
        expect(other.body.url).not.toContain('/media-upload');
        expect(other.body.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/chat-relay-media(-[0-9a-f]{12})?$/);
        expect(other.body.url).toBe(`${new URL(other.body.url).origin}/${process.env.MEDIA_BUCKET}`);
      }
    },
  );

  it("the app's own origin takes no form with a forged signature: a stored file stays as it was", async () => {
    const chat = await newChat();
    const original = (
      await api.post(`/api/v1/chats/${chat}/media`, {
        fileName: 'kept.txt',
        contentType: 'text/plain',
        base64Data: Buffer.from('original').toString('base64'),
      })
    ).body;
    const page = await api.post(
      `/api/v1/chats/${chat}/media/uploads`,
      { fileName: 'x.txt', contentType: 'text/plain', byteSize: 6 },
      { headers: { origin: api.url } },
    );
    // The attacker's own policy for the stored file's key, and no secret to sign it with.
    const policy = {
      expiration: new Date(Date.now() + 60_000).toISOString(),
      conditions: [
        { bucket: process.env.MEDIA_BUCKET },
        { key: original.storage_path },
        ['content-length-range', 1, 100],
      ],
    };
    const forged = {
      url: page.body.url,
      fields: {
        ...page.body.fields,
        key: original.storage_path,
        Policy: Buffer.from(JSON.stringify(policy)).toString('base64'),
        'X-Amz-Signature': 'not-a-signature',
      },
    };
    expect(await postToStorage(forged, Buffer.from('forged'))).toBe(403);
    const res = await fetch(`${api.url}/api/v1/files/${original.id}`);
    expect([res.status, await res.text()]).toEqual([200, 'original']);
  });

  it('refuses to open a session for a content type that is not a media type (415), storing nothing', async () => {
    const chat = await newChat();
    const keys = await storedKeys();
    for (const contentType of ['NaN', 'text', 'x y', '__proto__', 'text/plain\u0000']) {
      const res = await openSession(chat, { fileName: 'a.txt', contentType, byteSize: 5 });
      expect({ contentType, status: res.status, error: res.body?.error }).toEqual({
        contentType,
        status: 415,
        error: {
          code: 'UNSUPPORTED_MEDIA_TYPE',
          message: 'Uploaded file type is not allowed.',
          details: { field: 'file', contentType },
        },
      });
    }
    // Not well-formed Unicode: refused before the media rules, 400 naming the field.
    const lone = await openSession(chat, { fileName: 'a.txt', contentType: '\ud800', byteSize: 5 });
    expect([lone.status, Object.keys(lone.body.error.details.fieldErrors)]).toEqual([400, ['contentType']]);
    expect(await storedKeys()).toEqual(keys);
  });

  it('an image through a session gets its thumbnail; one that does not decode is refused and deleted', async () => {
    const chat = await newChat();
    const photo = await sharp({ create: { width: 2000, height: 1000, channels: 3, background: { r: 1, g: 2, b: 3 } } })
      .jpeg()
      .toBuffer();
    const ok = (await openSession(chat, { fileName: 'p.jpg', contentType: 'image/jpeg', byteSize: photo.length })).body;
    await postToStorage(ok, photo);
    const media = await finalize(chat, ok.uploadId);
    expect(media.status).toBe(201);
    expect(media.body).toMatchObject({
      kind: 'image',
      thumbnail_path: `uploads/${chat}/thumbnails/${media.body.id}.webp`,
    });
    const thumb = Buffer.from(await (await fetch(`${api.url}/api/v1/files/${media.body.id}/thumbnail`)).arrayBuffer());
    expect((await sharp(thumb).metadata()).width).toBe(512);

    const html = Buffer.from('<html><script>alert(1)</script></html>');
    const bad = (await openSession(chat, { fileName: 'x.png', contentType: 'image/png', byteSize: html.length })).body;
    await postToStorage(bad, html);
    const refused = await finalize(chat, bad.uploadId);
    expect([refused.status, refused.body.error.message]).toEqual([415, 'file content is not a valid image.']);
    expect(await storedKeys('pending/')).toEqual([]);
  });

  it(
    'storage refuses a POST of another size or type; finalize refuses such a file put around the policy (deleting ' +
      'it), or none yet; the session stays open',
    async () => {
      const chat = await newChat();
      const s = (await openSession(chat, { fileName: 'a.txt', contentType: 'text/plain', byteSize: 5 })).body;
      const none = await finalize(chat, s.uploadId);
      expect([none.status, none.body.error]).toEqual([
        400,
        { code: 'VALIDATION_ERROR', message: 'The file has not been uploaded yet.', details: { field: 'file' } },
      ]);
      expect(await postToStorage(s, Buffer.from('123456'))).toBe(400);
      expect(await postToStorage(s, Buffer.from('12345'), 'text/html')).toBe(403);
      expect(await storedKeys(`pending/${chat}/`)).toEqual([]);
      await putAround(s.fields.key!, Buffer.from('123456'), 'text/plain');
      const size = await finalize(chat, s.uploadId);
      expect([size.status, size.body.error.details]).toEqual([400, { field: 'file', byteSize: 5, uploadedBytes: 6 }]);
      expect(await storedKeys(`pending/${chat}/`)).toEqual([]);
      await putAround(s.fields.key!, Buffer.from('12345'), 'text/html');
      const type = await finalize(chat, s.uploadId);
      expect([type.status, type.body.error.message]).toEqual([
        415,
        'The uploaded file does not have the declared contentType.',
      ]);
      await postToStorage(s, Buffer.from('12345'));
      const ok = await finalize(chat, s.uploadId);
      expect([ok.status, ok.body.byte_size]).toEqual([201, 5]);
      const file = await fetch(`${api.url}/api/v1/files/${ok.body.id}`);
      expect([file.status, await file.text()]).toEqual([200, '12345']);
    },
  );

  it(
    'checks what a session declares: size over the limit, SVG, type rules, unknown chat, foreign message, other ' +
      'chat, unknown upload',
    async () => {
      const chat = await newChat();
      const other = await newChat();
      const tooBig = await openSession(chat, { fileName: 'a', contentType: 'text/plain', byteSize: 50_000_001 });
      expect([tooBig.status, tooBig.body.error.details]).toEqual([413, { field: 'file', maxUploadBytes: 50_000_000 }]);
      expect((await openSession(chat, { fileName: 'a.svg', contentType: 'image/svg+xml', byteSize: 10 })).status).toBe(
        415,
      );
      expect((await openSession(chat, { fileName: 'a', contentType: 'text/plain', byteSize: 0 })).status).toBe(400);
      expect(
        (await openSession(chat, { fileName: 'a', contentType: 'text/plain', byteSize: 1, kind: 'video' })).body.error
          .message,
      ).toBe('kind must be image, audio, or file.');
      expect(
        (await openSession('nochat00000000000000x', { fileName: 'a', contentType: 'text/plain', byteSize: 1 })).status,
      ).toBe(404);
      const msg = (await api.post(`/api/v1/chats/${other}/messages`, { role: 'user', content: 'x' })).body.id;
      expect(
        (await openSession(chat, { fileName: 'a', contentType: 'text/plain', byteSize: 1, messageId: msg })).body.error
          .message,
      ).toBe('messageId does not belong to this chat.');
      const s = (await openSession(chat, { fileName: 'a', contentType: 'text/plain', byteSize: 1 })).body;
      expect((await finalize(other, s.uploadId)).status).toBe(404);
      const unknown: Response = await finalize(chat, 'noupload000000000000x');
      expect([unknown.status, unknown.body.error]).toEqual([
        404,
        { code: 'NOT_FOUND', message: 'Upload not found.', details: { uploadId: 'noupload000000000000x' } },
      ]);
    },
  );
});
