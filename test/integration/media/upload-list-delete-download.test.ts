/**
 * Media without images (contract §5.6, §8): uploads in both body forms and their checks in
 * order, nothing stored by a failed upload, the record and its `media.attached` event, the
 * chat's media list (filters, cursor), metadata, deletion rules, and downloads with their
 * headers, byte ranges and `?token=` auth. Real HTTP against the local runtime and its S3
 * emulator (a data folder, as npm start runs it).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { eventsSince, readEvents } from '../../support/events.js';
import { useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { checkAnswer } from '../../support/openapi-check.js';
import { storedKeys, uploadForm as uploadParts } from './support.js';

const SECRET = 'og_media-test-secret-0123456789abcdef';
const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  maxUploadBytes: 2000,
  security: { instanceSecretEnabled: true, instanceSecret: SECRET, readEndpointsRequireInstanceSecret: true },
};
const auth = { authorization: `Bearer ${SECRET}` };

const api = useApi({ config });

const newChat = async (): Promise<string> =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' }, { headers: auth })).body.id;
const uploadJson = (chatId: string, body: Record<string, unknown>) =>
  api.post(`/api/v1/chats/${chatId}/media`, body, { headers: auth });
/** A multipart upload as this file's requests are sent (with the instance secret). */
const uploadForm = (chatId: string, parts: [string, string | Blob, string?][]) => uploadParts(api, chatId, parts, auth);
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');

/** A download, its answer checked against the API document as the shared client checks its own. */
async function download(mediaId: string, headers: Record<string, string> = {}, suffix = '') {
  const path = `/api/v1/files/${mediaId}${suffix}`;
  const res = await fetch(`${api.url}${path}`, { headers: { ...auth, ...headers } });
  const bytes = Buffer.from(await res.arrayBuffer());
  const text = bytes.toString('utf8');
  const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined;
  checkAnswer('GET', path, { status: res.status, headers: res.headers, body: json, text });
  return { status: res.status, headers: res.headers, bytes };
}

function expectError(res: Response, status: number, message: string, details: unknown = expect.anything()): void {
  expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status, message });
  if (details !== undefined) expect(res.body.error.details).toEqual(details);
}

describe('POST /chats/{chatId}/media', () => {
  it(
    'stores a JSON upload: the record (sanitized name, storage path, kind by type), its bytes, and ' + 'media.attached',
    async () => {
      const chat = await newChat();
      const before = (await readEvents(api.tableName)).length;
      const res = await uploadJson(chat, {
        fileName: ' my notes (1).txt ',
        contentType: 'text/plain; charset=utf-8',
        base64Data: b64('hello notes'),
      });
      expect(res.status).toBe(201);
      const media = res.body;
      expect(media).toEqual({
        id: expect.stringMatching(/^[A-Za-z0-9_-]{21}$/),
        chat_id: chat,
        message_id: null,
        storage_path: `uploads/${chat}/${media.id}.txt`,
        thumbnail_path: null,
        filename: 'my_notes__1_.txt',
        content_type: 'text/plain; charset=utf-8',
        byte_size: 11,
        kind: 'file',
        created_at: expect.any(String),
      });
      expect((await api.get(`/api/v1/media/${media.id}`, { headers: auth })).body).toEqual(media);
      expect(await storedKeys()).toContain(media.storage_path);
      const events = await eventsSince(api.tableName, before);
      expect(events.map((e) => [e.type, e.payload])).toEqual([
        ['media.attached', { chatId: chat, mediaId: media.id, messageId: null, kind: 'file' }],
      ]);
      // No chat field changes (§5.6.2).
      const chatAfter = (await api.get(`/api/v1/chats/${chat}`, { headers: auth })).body;
      expect(chatAfter.last_message_preview).toBeNull();
    },
  );

  it('stores a multipart upload with its part type, an audio kind, and a name without extension as .bin', async () => {
    const chat = await newChat();
    const res = await uploadForm(chat, [
      ['file', new Blob([Buffer.from('OggS fake voice')], { type: 'audio/ogg' }), 'voice'],
    ]);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      filename: 'voice',
      content_type: 'audio/ogg',
      kind: 'audio',
      byte_size: 15,
      storage_path: `uploads/${chat}/${res.body.id}.bin`,
    });
    const got = await download(res.body.id);
    expect(got.bytes.toString()).toBe('OggS fake voice');
  });

  it('takes a file of exactly maxUploadBytes in both forms, and refuses one byte more (§5.6.2 checks 5, 11)', async () => {
    const chat = await newChat();
    const exact = Buffer.alloc(2000, 0x61);
    const over = Buffer.alloc(2001, 0x61);
    const part = (bytes: Buffer): [string, Blob, string] => [
      'file',
      new Blob([bytes], { type: 'text/plain' }),
      'a.txt',
    ];
    const multipart = await uploadForm(chat, [part(exact)]);
    expect({ status: multipart.status, size: multipart.body.byte_size }).toEqual({ status: 201, size: 2000 });
    const json = await uploadJson(chat, { fileName: 'a.txt', contentType: 'text/plain', base64Data: b64(exact) });
    expect({ status: json.status, size: json.body.byte_size }).toEqual({ status: 201, size: 2000 });
    expectError(await uploadForm(chat, [part(over)]), 413, 'file exceeds maxUploadBytes.', {
      field: 'file',
      maxUploadBytes: 2000,
    });
  });

  it('sanitizes a multipart file name as sent, directories included (§8.3)', async () => {
    const chat = await newChat();
    const res = await uploadForm(chat, [['file', new Blob(['x'], { type: 'text/plain' }), '../../etc/passwd']]);
    expect(res.status).toBe(201);
    expect(res.body.filename).toBe('.._.._etc_passwd');
  });

  it('reads a multipart file name as UTF-8 and sanitizes it per character, in both header forms (§8.3)', async () => {
    const chat = await newChat();
    // fetch's FormData sends the name's UTF-8 bytes in filename="…".
    const plain = await uploadForm(chat, [['file', new Blob(['x'], { type: 'text/plain' }), 'notes é 日本.txt']]);
    expect(plain.status).toBe(201);
    expect(plain.body.filename).toBe('notes_____.txt');
    // RFC 5987's filename*=UTF-8''… (percent-encoded), which wins over a plain fallback name.
    const raw = async (disposition: string) => {
      const boundary = 'relay-boundary-5987';
      const body = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; ${disposition}\r\n` +
          `Content-Type: text/plain\r\n\r\nx\r\n--${boundary}--\r\n`,
        'utf8',
      );
      const res = await fetch(`${api.url}/api/v1/chats/${chat}/media`, {
        method: 'POST',
        body,
        headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      });
      return (await res.json()) as { id: string; filename: string };
    };
    const extended = await raw(`filename="fallback.txt"; filename*=UTF-8''notes%20%C3%A9%20%E6%97%A5%E6%9C%AC.txt`);
    expect(extended.filename).toBe('notes_____.txt');
    for (const id of [plain.body.id as string, extended.id]) {
      expect((await api.get(`/api/v1/media/${id}`, { headers: auth })).body.filename).toBe('notes_____.txt');
      const file = await download(id);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-disposition')).toBe('attachment; filename="notes_____.txt"');
    }
  });

  it('refuses a content type that is not a media type (type/subtype, header-safe) with 415, storing nothing', async () => {
    const chat = await newChat();
    const keys = await storedKeys();
    const bad = ['NaN', 'text', 'x y', '__proto__', '\u0000', 'text/plain\u0000', 'a/b c'];
    for (const contentType of bad) {
      const res = await uploadJson(chat, { fileName: 'a.txt', contentType, base64Data: b64('x') });
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
    // A type that is not well-formed Unicode is refused before the media rules: 400 naming the field.
    for (const contentType of ['\ud800', 'text/\ud800']) {
      const res = await uploadJson(chat, { fileName: 'a.txt', contentType, base64Data: b64('x') });
      expect([res.status, res.body.error.code, Object.keys(res.body.error.details.fieldErrors)]).toEqual([
        400,
        'VALIDATION_ERROR',
        ['contentType'],
      ]);
    }
    expect((await api.get(`/api/v1/chats/${chat}/media`, { headers: auth })).body.data).toEqual([]);
    expect(await storedKeys()).toEqual(keys);
    // Parameters and any letter case are still media types, stored normalized (§8.1 [Divergence]).
    for (const [contentType, stored] of [
      ['text/plain; charset=utf-8', 'text/plain; charset=utf-8'],
      ['Application/Vnd.Example+JSON', 'application/vnd.example+json'],
      ['x-custom/x.y-z_1', 'x-custom/x.y-z_1'],
    ]) {
      const res = await uploadJson(chat, { fileName: 'a.txt', contentType, base64Data: b64('x') });
      expect([contentType, res.status, res.body.content_type]).toEqual([contentType, 201, stored]);
    }
  });

  it("fingerprints an upload's Idempotency-Key by the file's digest, name, type, kind and messageId (§1.10)", async () => {
    const chat = await newChat();
    const keyed = (key: string, parts: [string, string | Blob, string?][]) =>
      uploadParts(api, chat, parts, { ...auth, 'idempotency-key': key });
    const file = (text: string, name = 'a.txt', type = 'text/plain'): [string, Blob, string] => [
      'file',
      new Blob([text], { type }),
      name,
    ];
    const first = await keyed('upload-1', [file('same')]);
    expect(first.status).toBe(201);
    // The same upload again (a new form, so a new multipart boundary): the first answer, nothing new.
    const again = await keyed('upload-1', [file('same')]);
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 201, id: first.body.id });
    // Any of the fingerprinted parts different: 409, nothing stored.
    for (const parts of [
      [file('other bytes')],
      [file('same', 'b.txt')],
      [file('same', 'a.txt', 'application/pdf')],
      [file('same'), ['kind', 'audio']],
    ] as [string, string | Blob, string?][][]) {
      expectError(
        await keyed('upload-1', parts),
        409,
        'Idempotency-Key already used with a different request payload.',
      );
    }
    const json = (key: string, base64Data: string) =>
      api.post(
        `/api/v1/chats/${chat}/media`,
        { fileName: 'x.txt', contentType: 'text/plain', base64Data },
        { headers: { ...auth, 'idempotency-key': key } },
      );
    expect((await json('upload-2', b64('x'))).status).toBe(201);
    expectError(
      await json('upload-2', b64('y')),
      409,
      'Idempotency-Key already used with a different request payload.',
    );
    const listed = await api.get(`/api/v1/chats/${chat}/media`, { headers: auth });
    expect(listed.body.data).toHaveLength(2);
  });

  it('links at upload with messageId (a message of this chat), and refuses one from another chat', async () => {
    const chat = await newChat();
    const other = await newChat();
    const message = (
      await api.post(
        `/api/v1/chats/${chat}/messages`,
        { role: 'agent', senderId: 'assistant', content: 'here' },
        { headers: auth },
      )
    ).body.id;
    const linked = await uploadForm(chat, [
      ['file', new Blob(['pdf bytes'], { type: 'application/pdf' }), 'a.pdf'],
      ['messageId', message],
      ['kind', 'file'],
    ]);
    expect(linked.status).toBe(201);
    expect(linked.body.message_id).toBe(message);
    const wrong = await uploadJson(other, {
      fileName: 'a.pdf',
      contentType: 'application/pdf',
      base64Data: b64('x'),
      messageId: message,
    });
    expectError(wrong, 400, 'messageId does not belong to this chat.', { field: 'messageId' });
  });

  it('answers the checks in the contract order, storing nothing', async () => {
    const chat = await newChat();
    const keys = await storedKeys();
    const missingChat = 'nochat00000000000000x';
    // JSON shapes (6, 7).
    expectError(
      await api.post(`/api/v1/chats/${chat}/media`, undefined, {
        headers: auth,
        raw: '{nope',
        contentType: 'application/json',
      }),
      400,
      'Invalid JSON body.',
      null,
    );
    expectError(
      await api.post(`/api/v1/chats/${chat}/media`, undefined, {
        headers: auth,
        raw: '[1]',
        contentType: 'text/plain',
      }),
      400,
      'JSON body must be an object.',
      null,
    );
    expectError(
      await uploadJson(chat, { contentType: 'text/plain', base64Data: b64('x') }),
      400,
      'fileName is required.',
      { field: 'fileName' },
    );
    expectError(
      await uploadJson(chat, { fileName: 'a', contentType: '  ', base64Data: b64('x') }),
      400,
      'contentType is required.',
      { field: 'contentType' },
    );
    expectError(
      await uploadJson(chat, { fileName: 'a', contentType: 'text/plain', base64Data: '' }),
      400,
      'base64Data is required.',
      { field: 'base64Data' },
    );
    expectError(
      await uploadJson(chat, { fileName: 'a', contentType: 'text/plain', base64Data: 'not*base64!' }),
      400,
      'base64Data must be standard base64.',
      { field: 'base64Data' },
    );
    // 8, 11, 12, 13 — before the chat is looked up (15).
    expectError(
      await uploadJson(missingChat, { fileName: 'a', contentType: 'text/plain', base64Data: b64('x'), kind: 'video' }),
      400,
      'kind must be image, audio, or file.',
      { field: 'kind' },
    );
    expectError(
      await uploadJson(missingChat, { fileName: 'a', contentType: 'text/plain', base64Data: b64(Buffer.alloc(2001)) }),
      413,
      'file exceeds maxUploadBytes.',
      {
        field: 'file',
        maxUploadBytes: 2000,
      },
    );
    for (const type of ['image/svg+xml', 'Image/SVG+XML; charset=utf-8']) {
      expectError(
        await uploadJson(missingChat, {
          fileName: 'x.svg',
          contentType: type,
          base64Data: b64('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        }),
        415,
        'SVG uploads are not allowed.',
        {
          field: 'file',
          contentType: type,
        },
      );
    }
    const svgForm = await uploadForm(missingChat, [['file', new Blob(['<svg/>'], { type: 'image/svg+xml' }), 'x.svg']]);
    expectError(svgForm, 415, 'SVG uploads are not allowed.');
    expectError(
      await uploadJson(missingChat, { fileName: 'a', contentType: 'text/plain', base64Data: b64('x') }),
      404,
      'Chat not found.',
      { chatId: missingChat },
    );
    // Multipart: no file part (3), kind as a file (4), a file over the cap (5), and a body over cap + 256 KiB (1).
    expectError(await uploadForm(chat, [['kind', 'file']]), 400, 'file is required.', { field: 'file' });
    expectError(
      await uploadForm(chat, [
        ['file', new Blob(['x']), 'a.txt'],
        ['kind', new Blob(['file']), 'kind.txt'],
      ]),
      400,
      'kind must be a string.',
      { field: 'kind' },
    );
    expectError(
      await uploadForm(chat, [['file', new Blob([Buffer.alloc(2001)], { type: 'text/plain' }), 'big.txt']]),
      413,
      'file exceeds maxUploadBytes.',
      { field: 'file', maxUploadBytes: 2000 },
    );
    const huge = await uploadForm(chat, [
      ['file', new Blob([Buffer.alloc(300_000)], { type: 'text/plain' }), 'huge.txt'],
    ]);
    expectError(huge, 413, 'multipart body exceeds maxUploadBytes.', {
      field: 'file',
      maxBodyBytes: 2000 + 262_144,
      contentLength: expect.any(Number),
    });
    // Zero bytes (10).
    expectError(
      await uploadForm(chat, [['file', new Blob([], { type: 'text/plain' }), 'empty.txt']]),
      400,
      'file cannot be empty.',
      { field: 'file' },
    );
    expect(await storedKeys()).toEqual(keys);
  });
});

describe('GET /chats/{chatId}/media', () => {
  it('lists newest first, filters by kind and messageId, and pages with a cursor', async () => {
    const chat = await newChat();
    const ids: string[] = [];
    for (const [i, type] of ['text/plain', 'audio/mpeg', 'text/csv', 'audio/wav', 'application/pdf'].entries()) {
      ids.push(
        (await uploadJson(chat, { fileName: `f${i}`, contentType: type, base64Data: b64(`bytes ${i}`) })).body.id,
      );
    }
    const all = await api.get(`/api/v1/chats/${chat}/media`, { headers: auth });
    expect(all.body.data.map((m: { id: string }) => m.id)).toEqual([...ids].reverse());
    expect(all.body.cursor).toEqual({ next: null, hasMore: false });

    const page1 = await api.get(`/api/v1/chats/${chat}/media?limit=2`, { headers: auth });
    expect(page1.body.data.map((m: { id: string }) => m.id)).toEqual([ids[4], ids[3]]);
    expect(page1.body.cursor.hasMore).toBe(true);
    const page2 = await api.get(
      `/api/v1/chats/${chat}/media?limit=2&cursor=${encodeURIComponent(page1.body.cursor.next)}`,
      { headers: auth },
    );
    expect(page2.body.data.map((m: { id: string }) => m.id)).toEqual([ids[2], ids[1]]);
    const page3 = await api.get(
      `/api/v1/chats/${chat}/media?limit=2&cursor=${encodeURIComponent(page2.body.cursor.next)}`,
      { headers: auth },
    );
    expect(page3.body).toEqual({
      data: [expect.objectContaining({ id: ids[0] })],
      cursor: { next: null, hasMore: false },
    });

    const audio = await api.get(`/api/v1/chats/${chat}/media?kind=audio&limit=1`, { headers: auth });
    expect(audio.body.data.map((m: { id: string }) => m.id)).toEqual([ids[3]]);
    const audio2 = await api.get(
      `/api/v1/chats/${chat}/media?kind=audio&limit=1&cursor=${encodeURIComponent(audio.body.cursor.next)}`,
      { headers: auth },
    );
    expect(audio2.body).toEqual({
      data: [expect.objectContaining({ id: ids[1] })],
      cursor: { next: null, hasMore: false },
    });

    // Linked through a message's trace: the messageId filter sees it.
    const msg = (
      await api.post(
        `/api/v1/chats/${chat}/messages`,
        { role: 'user', content: 'see', trace: { mediaIds: [ids[2]] } },
        { headers: auth },
      )
    ).body.id;
    const byMessage = await api.get(`/api/v1/chats/${chat}/media?messageId=${msg}`, { headers: auth });
    expect(byMessage.body.data).toEqual([expect.objectContaining({ id: ids[2], message_id: msg })]);
  });

  it(
    'answers 200 with an empty page for a chat without media, 404 for an unknown chat, 400 for a bad cursor or ' +
      'limit',
    async () => {
      const chat = await newChat();
      expect((await api.get(`/api/v1/chats/${chat}/media`, { headers: auth })).body).toEqual({
        data: [],
        cursor: { next: null, hasMore: false },
      });
      expectError(
        await api.get('/api/v1/chats/nochat00000000000000x/media', { headers: auth }),
        404,
        'Chat not found.',
        {
          chatId: 'nochat00000000000000x',
        },
      );
      expect((await api.get(`/api/v1/chats/${chat}/media?cursor=forged`, { headers: auth })).status).toBe(400);
      // The cursor before the chat (§1.14: a rule error before a 404).
      expectError(
        await api.get('/api/v1/chats/nochat00000000000000x/media?cursor=forged', { headers: auth }),
        400,
        'Invalid cursor value.',
        { field: 'cursor' },
      );
      expect((await api.get(`/api/v1/chats/${chat}/media?limit=101`, { headers: auth })).status).toBe(400);
      expect((await api.get(`/api/v1/chats/${chat}/media?kind=video`, { headers: auth })).status).toBe(400);
    },
  );
});

describe('DELETE /media/{mediaId}', () => {
  it(
    'deletes unattached media (record, entry and object), answering the record as it was; 409 when attached; 404 ' +
      'after',
    async () => {
      const chat = await newChat();
      const media = (await uploadJson(chat, { fileName: 'a.txt', contentType: 'text/plain', base64Data: b64('bye') }))
        .body;
      const linked = (await uploadJson(chat, { fileName: 'b.txt', contentType: 'text/plain', base64Data: b64('stay') }))
        .body;
      await api.post(
        `/api/v1/chats/${chat}/messages`,
        { role: 'user', content: 'with file', trace: { mediaIds: [linked.id] } },
        { headers: auth },
      );

      const res = await api.request('DELETE', `/api/v1/media/${media.id}`, undefined, { headers: auth });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(media);
      expectError(await api.get(`/api/v1/media/${media.id}`, { headers: auth }), 404, 'Media not found.', {
        mediaId: media.id,
      });
      expect((await download(media.id)).status).toBe(404);
      expect(await storedKeys()).not.toContain(media.storage_path);
      expect(
        (await api.get(`/api/v1/chats/${chat}/media`, { headers: auth })).body.data.map((m: { id: string }) => m.id),
      ).toEqual([linked.id]);

      expectError(
        await api.request('DELETE', `/api/v1/media/${linked.id}`, undefined, { headers: auth }),
        409,
        'Cannot delete media that is attached to a message.',
        { mediaId: linked.id },
      );
      expect((await api.get(`/api/v1/media/${linked.id}`, { headers: auth })).status).toBe(200);
      expectError(
        await api.request('DELETE', `/api/v1/media/${media.id}`, undefined, { headers: auth }),
        404,
        'Media not found.',
        { mediaId: media.id },
      );
    },
  );
});

describe('GET /files/{mediaId}', () => {
  const ten = '0123456789';
  let id: string;
  beforeAll(async () => {
    const chat = await newChat();
    id = (
      await uploadJson(chat, {
        fileName: 'ten "quoted" \\ name.pdf',
        contentType: 'application/pdf',
        base64Data: b64(ten),
      })
    ).body.id;
  });

  it('serves the whole file with the contract headers', async () => {
    const res = await download(id);
    expect(res.status).toBe(200);
    expect(res.bytes.toString()).toBe(ten);
    expect(
      Object.fromEntries(
        [...res.headers].filter(
          ([k]) => k !== 'date' && k !== 'connection' && k !== 'keep-alive' && !k.startsWith('access-control'),
        ),
      ),
    ).toEqual({
      'content-type': 'application/pdf',
      // PDF is an attachment in this service (§5.6.5 [Divergence]: a sandboxed response has no PDF viewer).
      'content-disposition': 'attachment; filename="ten__quoted____name.pdf"',
      'content-security-policy':
        "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; " +
        "form-action 'none'; sandbox",
      'x-content-type-options': 'nosniff',
      'cache-control': 'private, max-age=86400',
      'accept-ranges': 'bytes',
      'content-length': '10',
    });
  });

  it.each([
    ['bytes=0-3', 206, '0123', 'bytes 0-3/10'],
    ['bytes=0-0', 206, '0', 'bytes 0-0/10'],
    ['bytes=7-', 206, '789', 'bytes 7-9/10'],
    ['bytes=5-100', 206, '56789', 'bytes 5-9/10'],
    ['bytes=-3', 206, '789', 'bytes 7-9/10'],
    ['bytes=-50', 206, ten, 'bytes 0-9/10'],
    ['bytes=9-9', 206, '9', 'bytes 9-9/10'],
    ['bytes=10-', 416, '', 'bytes */10'],
    ['bytes=12-20', 416, '', 'bytes */10'],
  ])('Range %s → %i', async (range, status, body, contentRange) => {
    const res = await download(id, { range });
    expect([
      res.status,
      res.bytes.toString(),
      res.headers.get('content-range'),
      res.headers.get('content-length'),
    ]).toEqual([status, body, contentRange, String(body.length)]);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it.each([
    ['items=0-3', 'Invalid Range header.'],
    ['bytes=', 'Invalid Range header.'],
    ['bytes=a-b', 'Invalid Range header.'],
    ['bytes=5-2', 'Invalid Range header.'],
    ['bytes=-0', 'Invalid Range header.'],
    ['bytes=0-1,3-4', 'Only a single byte range is supported.'],
  ])('Range %s → 400 %s', async (range, message) => {
    const res = await fetch(`${api.url}/api/v1/files/${id}`, { headers: { ...auth, range } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string; code: string } }).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message,
    });
  });

  it(
    'serves HTML and SVG-named files as attachments, accepts ?token= for <img>/<audio> tags, and 404s unknown ' +
      'media',
    async () => {
      const chat = await newChat();
      const html = (
        await uploadJson(chat, {
          fileName: 'page.html',
          contentType: 'text/html',
          base64Data: b64('<script>alert(1)</script>'),
        })
      ).body.id;
      const res = await fetch(`${api.url}/api/v1/files/${html}?token=${SECRET}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'none'");
      expect((await fetch(`${api.url}/api/v1/files/${html}`)).status).toBe(401);
      const missing = await download('nomedia0000000000000x');
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.bytes.toString()).error).toMatchObject({
        message: 'Media not found.',
        details: { mediaId: 'nomedia0000000000000x' },
      });
      const thumb = await download(html, {}, '/thumbnail');
      expect([thumb.status, JSON.parse(thumb.bytes.toString()).error.message]).toEqual([404, 'Thumbnail not found.']);
    },
  );
});
