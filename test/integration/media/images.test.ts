/**
 * Image uploads (contract §5.6.2 checks 12–14, §8.2, §8.4, §3 previews, §4.4.8): thumbnails
 * for PNG, JPEG and WebP (made in the request, 512 px box, WebP), none for audio or files or
 * an image declared as `file`; decided by content: HTML or an HTML/PNG polyglot declared as
 * an image, SVG in any form, and an image declared `image` that is not one are refused with
 * 415 and nothing stored; a PNG declared as JPEG decodes and is kept as declared. Then
 * media-only and audio-only messages (previews) and media in dispatch batches.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';
import { storedKeys, uploadForm as uploadParts } from './support.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
  server: { dispatch: { mode: 'sequential' } },
};

const api = useApi({ config, dispatch: true });

const newChat = async (): Promise<string> =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
const upload = (
  chatId: string,
  fileName: string,
  contentType: string,
  bytes: Buffer,
  extra: Record<string, unknown> = {},
) =>
  api.post(`/api/v1/chats/${chatId}/media`, { fileName, contentType, base64Data: bytes.toString('base64'), ...extra });

const uploadForm = (chatId: string, fileName: string, type: string, bytes: Buffer) =>
  uploadParts(api, chatId, [['file', new Blob([bytes], { type }), fileName]]);

const image = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 80, b: 40 } } });

let png: Buffer;
let jpeg: Buffer;
let webp: Buffer;
beforeAll(async () => {
  png = await image(1200, 600).png().toBuffer();
  jpeg = await image(300, 900).jpeg().toBuffer();
  webp = await image(100, 50).webp().toBuffer();
});

async function thumbnailOf(mediaId: string) {
  const res = await fetch(`${api.url}/api/v1/files/${mediaId}/thumbnail`);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, bytes, meta: res.status === 200 ? await sharp(bytes).metadata() : undefined };
}

describe('image uploads', () => {
  const cases: [string, string, string, () => Buffer, [number, number]][] = [
    ['PNG', 'wide.png', 'image/png', () => png, [512, 256]],
    ['JPEG', 'tall.jpg', 'image/jpeg', () => jpeg, [171, 512]],
    ['WebP (small: never enlarged)', 'small.webp', 'image/webp', () => webp, [100, 50]],
  ];
  it.each(cases)(
    '%s: kind image, a WebP thumbnail inside 512×512 made in the request',
    async (_label, name, type, bytes, size) => {
      const chat = await newChat();
      const res = await uploadForm(chat, name, type, bytes());
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        kind: 'image',
        content_type: type,
        byte_size: bytes().length,
        thumbnail_path: `uploads/${chat}/thumbnails/${res.body.id}.webp`,
      });
      const thumb = await thumbnailOf(res.body.id);
      expect(thumb.res.status).toBe(200);
      expect([thumb.meta?.format, thumb.meta?.width, thumb.meta?.height]).toEqual(['webp', ...size]);
      expect(
        Object.fromEntries(
          ['content-type', 'content-disposition', 'cache-control', 'x-content-type-options'].map((h) => [
            h,
            thumb.res.headers.get(h),
          ]),
        ),
      ).toEqual({
        'content-type': 'image/webp',
        'content-disposition': `inline; filename="${res.body.id}-thumbnail.webp"`,
        'cache-control': 'private, max-age=86400',
        'x-content-type-options': 'nosniff',
      });
      // Every download is sandboxed, the thumbnail too (issue 33 item 2).
      expect(thumb.res.headers.get('content-security-policy')).toMatch(/; sandbox$/);
      const original = await fetch(`${api.url}/api/v1/files/${res.body.id}`);
      expect(Buffer.from(await original.arrayBuffer()).equals(bytes())).toBe(true);
      expect(original.headers.get('content-disposition')).toBe(`inline; filename="${name}"`);
    },
  );

  it(
    'keeps a PNG declared as JPEG (it decodes; the type is stored as declared), and makes no thumbnail for audio, ' +
      'files, or an image declared as file',
    async () => {
      const chat = await newChat();
      const misdeclared = await upload(chat, 'photo.jpg', 'image/jpeg', png);
      expect(misdeclared.status).toBe(201);
      expect(misdeclared.body).toMatchObject({ kind: 'image', content_type: 'image/jpeg' });
      expect((await thumbnailOf(misdeclared.body.id)).meta?.width).toBe(512);
      for (const [name, type, extra] of [
        ['v.ogg', 'audio/ogg', {}],
        ['r.pdf', 'application/pdf', {}],
        ['p.png', 'image/png', { kind: 'file' }],
      ] as const) {
        const res = await upload(chat, name, type, name === 'p.png' ? png : Buffer.from('not an image'), extra);
        expect([name, res.status, res.body.thumbnail_path]).toEqual([name, 201, null]);
        const thumb = await thumbnailOf(res.body.id);
        expect([name, thumb.res.status, JSON.parse(thumb.bytes.toString()).error.message]).toEqual([
          name,
          404,
          'Thumbnail not found.',
        ]);
      }
    },
  );

  it(
    'refuses, storing nothing: HTML as an image, an HTML/PNG polyglot, a truncated PNG, text declared kind image, ' +
      'and SVG by JSON, multipart and with a charset',
    async () => {
      const chat = await newChat();
      const before = await storedKeys();
      const html = Buffer.from('<!doctype html><script>alert(document.cookie)</script>');
      const polyglot = Buffer.concat([png.subarray(0, 16), Buffer.from('<html><script>alert(1)</script></html>')]);
      const refusals: [string, Response][] = [
        ['html as png', await upload(chat, 'x.png', 'image/png', html)],
        ['polyglot', await uploadForm(chat, 'poly.png', 'image/png', polyglot)],
        ['truncated', await upload(chat, 'cut.png', 'image/png', png.subarray(0, Math.floor(png.length / 2)))],
        [
          'declared image',
          await upload(chat, 'notes.txt', 'text/plain', Buffer.from('plain words'), { kind: 'image' }),
        ],
      ];
      for (const [label, res] of refusals) {
        expect([label, res.status, res.body.error]).toEqual([
          label,
          415,
          {
            code: 'UNSUPPORTED_MEDIA_TYPE',
            message: 'file content is not a valid image.',
            details: { field: 'file', contentType: expect.any(String) },
          },
        ]);
      }
      const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>');
      for (const res of [
        await upload(chat, 'a.svg', 'image/svg+xml', svg),
        await upload(chat, 'a.svg', 'image/svg+xml; charset=utf-8', svg),
        await uploadForm(chat, 'a.svg', 'image/svg+xml', svg),
      ]) {
        expect([res.status, res.body.error.message]).toEqual([415, 'SVG uploads are not allowed.']);
      }
      expect(await storedKeys()).toEqual(before);
      expect((await api.get(`/api/v1/chats/${chat}/media`)).body.data).toEqual([]);
    },
  );
});

describe('media in messages and dispatch', () => {
  it(
    'a media-only user message previews as Attachment, an audio-only one as Voice note, and its batch lists the ' +
      'attachments',
    async () => {
      const chat = await newChat();
      const photo = (await upload(chat, 'shot 1.png', 'image/png', png)).body;
      const voice = (await upload(chat, 'memo.ogg', 'audio/ogg', Buffer.from('OggS voice'))).body;

      const first = await api.post(`/api/v1/chats/${chat}/messages`, { role: 'user', trace: { mediaIds: [photo.id] } });
      expect(first.status).toBe(201);
      expect(first.body.content_final).toBeNull();
      expect((await api.get(`/api/v1/chats/${chat}`)).body.last_message_preview).toBe('Attachment');
      expect((await api.get(`/api/v1/media/${photo.id}`)).body.message_id).toBe(first.body.id);

      const claim = await api.post('/api/v1/dispatch/claim', { workerId: 'w', waitMs: 5000 });
      expect(claim.status).toBe(200);
      expect(claim.body.items).toEqual([
        expect.objectContaining({
          sourceId: first.body.id,
          content: '',
          mediaIds: [photo.id],
          attachmentNames: ['shot_1.png'],
        }),
      ]);
      expect(claim.body.attachments).toEqual([
        {
          mediaId: photo.id,
          fileName: 'shot_1.png',
          kind: 'image',
          sourceInputId: claim.body.items[0].inputId,
          sourceIndex: 0,
        },
      ]);
      expect(claim.body.compiledContent).toBe('(no text)');
      expect((await api.post(`/api/v1/dispatch/${claim.body.batchId}/complete`, { workerId: 'w' })).status).toBe(204);

      const second = await api.post(`/api/v1/chats/${chat}/messages`, {
        role: 'agent',
        senderId: 'assistant',
        trace: { mediaIds: [voice.id] },
      });
      expect(second.status).toBe(201);
      expect((await api.get(`/api/v1/chats/${chat}`)).body.last_message_preview).toBe('Voice note');
      // Attached now: it cannot be deleted.
      expect((await api.request('DELETE', `/api/v1/media/${voice.id}`)).status).toBe(409);
    },
  );
});
