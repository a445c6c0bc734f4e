/**
 * A stored media type is one media type (contract §8.1 [Divergence], §5.6.5; issue 33 item 2):
 * `audio/mpeg;,text/html` and other lists or stray text are refused with 415 in both upload
 * forms and at upload-session start, storing nothing; what is accepted is stored normalized
 * (lower-cased `type/subtype`, `charset` for text only); every download (small, redirected,
 * thumbnail) carries the normalized type, nosniff and the sandboxing CSP, inline for image,
 * audio and video only; media stored before (an unnormalized type in its record) is served
 * normalized, or as an application/octet-stream attachment. The redirect's target (the local
 * S3 front) serves the same headers and refuses a URL whose signature was changed or removed,
 * and a listing of the bucket.
 */
import { describe, expect, it } from '@jest/globals';
import sharp from 'sharp';
import { useApi } from '../../support/api.js';
import { putAround, storedKeys, uploadForm as uploadParts } from './support.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config });

const newChat = async (): Promise<string> =>
  (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
const uploadJson = (chatId: string, body: Record<string, unknown>) => api.post(`/api/v1/chats/${chatId}/media`, body);
const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const HTML = '<form method=post action=/api/v1/chats><input name=x></form><script>parent.pwned=1</script>';
const SANDBOX = /^default-src 'none';.*; sandbox$/;

/** The download's headers that matter here. */
async function served(url: string, init: RequestInit = {}) {
  const res = await fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    disposition: res.headers.get('content-disposition'),
    nosniff: res.headers.get('x-content-type-options'),
    csp: res.headers.get('content-security-policy'),
    location: res.headers.get('location'),
    body,
  };
}

const refused = (contentType: string) => ({
  status: 415,
  error: {
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Uploaded file type is not allowed.',
    details: { field: 'file', contentType },
  },
});

describe('a declared type that is not one media type', () => {
  it.each(['audio/mpeg;,text/html', 'text/html, image/png', 'audio/mpeg; x', 'image/png text/html', 'audio/ mpeg'])(
    '%j is refused with 415 in JSON, multipart and at session start, storing nothing',
    async (contentType) => {
      const chat = await newChat();
      const json = await uploadJson(chat, { fileName: 'a.mp3', contentType, base64Data: b64(HTML) });
      expect({ status: json.status, error: json.body.error }).toEqual(refused(contentType));
      const form = await uploadParts(api, chat, [['file', new Blob([HTML], { type: contentType }), 'a.mp3']]);
      // fetch's FormData sends a Blob's type as its part's Content-Type (lower-cased).
      expect({ status: form.status, error: form.body.error }).toEqual(refused(contentType.toLowerCase()));
      const session = await api.post(`/api/v1/chats/${chat}/media/uploads`, {
        fileName: 'a.mp3',
        contentType,
        byteSize: 5_000_000,
      });
      expect({ status: session.status, error: session.body.error }).toEqual(refused(contentType));
      expect((await api.get(`/api/v1/chats/${chat}/media`)).body.data).toEqual([]);
      expect(await storedKeys(`uploads/${chat}/`)).toEqual([]);
      expect(await storedKeys(`pending/${chat}/`)).toEqual([]);
    },
  );

  it('a multipart part whose raw Content-Type is a list is refused (not read as text/plain)', async () => {
    const chat = await newChat();
    const boundary = 'b0undary';
    const body =
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n` +
      `Content-Type: audio/mpeg;,text/html\r\n\r\n${HTML}\r\n--${boundary}--\r\n`;
    const res = await fetch(`${api.url}/api/v1/chats/${chat}/media`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect({ status: res.status, error: ((await res.json()) as { error: unknown }).error }).toEqual(
      refused('audio/mpeg;,text/html'),
    );
    expect(await storedKeys(`uploads/${chat}/`)).toEqual([]);
  });
});

describe('an accepted type is stored and served normalized', () => {
  it.each([
    ['Text/Plain; Format=flowed; Charset="UTF-8"', 'text/plain; charset=utf-8', 'file', 'attachment'],
    ['text/html', 'text/html', 'file', 'attachment'],
    ['audio/MPEG; rate=44100', 'audio/mpeg', 'audio', 'inline'],
    ['video/mp4;codecs="avc1.42E01E"', 'video/mp4', 'file', 'inline'],
    ['application/pdf; charset=utf-8', 'application/pdf', 'file', 'attachment'],
    ['application/json;', 'application/json', 'file', 'attachment'],
  ])('%j → %j (%s, %s)', async (declared, stored, kind, disposition) => {
    const chat = await newChat();
    const res = await uploadJson(chat, { fileName: 'f "x".bin', contentType: declared, base64Data: b64(HTML) });
    expect(res.status).toBe(201);
    expect([res.body.content_type, res.body.kind]).toEqual([stored, kind]);
    const file = await served(`${api.url}/api/v1/files/${res.body.id}`);
    expect(file).toMatchObject({
      status: 200,
      type: stored,
      disposition: `${disposition}; filename="f__x_.bin"`,
      nosniff: 'nosniff',
      csp: expect.stringMatching(SANDBOX),
    });
  });

  it('a session stores and presigns the normalized type; the thumbnail is sandboxed too', async () => {
    const chat = await newChat();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#08f' } })
      .png()
      .toBuffer();
    const opened = await api.post(`/api/v1/chats/${chat}/media/uploads`, {
      fileName: 'p.png',
      contentType: 'IMAGE/PNG; x=1',
      byteSize: png.length,
      kind: 'image',
    });
    expect(opened.status).toBe(201);
    expect(opened.body.fields['Content-Type']).toBe('image/png');
    const form = new FormData();
    for (const [k, v] of Object.entries(opened.body.fields as Record<string, string>)) form.append(k, v);
    form.append('file', new Blob([png]), 'p.png');
    expect((await fetch(opened.body.url, { method: 'POST', body: form })).status).toBe(204);
    const done = await api.post(`/api/v1/chats/${chat}/media/uploads/${opened.body.uploadId}/complete`);
    expect([done.status, done.body.content_type]).toEqual([201, 'image/png']);
    const thumb = await served(`${api.url}/api/v1/files/${done.body.id}/thumbnail`);
    expect(thumb).toMatchObject({
      status: 200,
      type: 'image/webp',
      nosniff: 'nosniff',
      csp: expect.stringMatching(SANDBOX),
    });
    const original = await served(`${api.url}/api/v1/files/${done.body.id}`);
    expect([original.type, original.disposition]).toEqual(['image/png', 'inline; filename="p.png"']);
  });
});

describe('media stored before types were normalized', () => {
  /** A record as an older version stored it (its type verbatim), with its object. */
  async function legacy(contentType: string, bytes: Buffer): Promise<string> {
    const chat = await newChat();
    const { newId } = await import('../../../functions/platform/ids.js');
    const { transact } = await import('../../../functions/store/db.js');
    const { NO_DEADLINE } = await import('../../../functions/platform/deadline.js');
    const Store = await import('../../../functions/store/media-repo.js');
    const id = newId();
    const record = {
      id,
      chat_id: chat,
      message_id: null,
      storage_path: `uploads/${chat}/${id}.mp3`,
      thumbnail_path: null,
      filename: 'old.mp3',
      content_type: contentType,
      byte_size: bytes.length,
      kind: 'audio' as const,
      created_at: new Date().toISOString(),
    };
    await transact(Store.putMediaWrites(record), NO_DEADLINE);
    await putAround(record.storage_path, bytes, contentType);
    return id;
  }

  it('a type that is not one media type is served as an application/octet-stream attachment', async () => {
    const id = await legacy('audio/mpeg;,text/html', Buffer.from(HTML));
    expect(await served(`${api.url}/api/v1/files/${id}`)).toMatchObject({
      status: 200,
      type: 'application/octet-stream',
      disposition: 'attachment; filename="old.mp3"',
      nosniff: 'nosniff',
      csp: expect.stringMatching(SANDBOX),
    });
  });

  it('over 4 MB: the redirect target serves the same headers, refuses a changed or absent signature and listing', async () => {
    const big = Buffer.concat([Buffer.from(HTML), Buffer.alloc(4_300_000, 0x20)]);
    const id = await legacy('audio/mpeg;,text/html', big);
    const redirect = await served(`${api.url}/api/v1/files/${id}`, { redirect: 'manual' });
    expect(redirect).toMatchObject({ status: 307, nosniff: 'nosniff', csp: expect.stringMatching(SANDBOX) });
    const location = new URL(redirect.location!);
    expect([
      location.searchParams.get('response-content-type'),
      location.searchParams.get('response-content-disposition'),
    ]).toEqual(['application/octet-stream', 'attachment; filename="old.mp3"']);
    const target = await served(location.href);
    expect(target).toMatchObject({
      status: 200,
      type: 'application/octet-stream',
      disposition: 'attachment; filename="old.mp3"',
      nosniff: 'nosniff',
      csp: "default-src 'none'; sandbox",
    });
    expect(target.body.equals(big)).toBe(true);

    const codeOf = async (url: string) => {
      const res = await served(url);
      return [res.status, /<Code>(\w+)<\/Code>/.exec(res.body.toString())?.[1], res.nosniff, res.csp];
    };
    const denied = (code: string) => [403, code, 'nosniff', "default-src 'none'; sandbox"];
    // The signature of another URL, the overrides changed, no signature at all: refused.
    const tampered = new URL(location.href);
    tampered.searchParams.set('response-content-type', 'text/html');
    tampered.searchParams.set('response-content-disposition', 'inline');
    expect(await codeOf(tampered.href)).toEqual(denied('SignatureDoesNotMatch'));
    const forged = new URL(location.href);
    forged.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect(await codeOf(forged.href)).toEqual(denied('SignatureDoesNotMatch'));
    const unsigned = `${location.origin}${location.pathname}`;
    expect(await codeOf(unsigned)).toEqual(denied('AccessDenied'));
    // What a page on the bucket's origin would read: the buckets, and the media bucket's keys.
    expect(await codeOf(`${location.origin}/`)).toEqual(denied('AccessDenied'));
    const bucket = location.pathname.split('/')[1];
    expect(await codeOf(`${location.origin}/${bucket}?list-type=2`)).toEqual(denied('AccessDenied'));
  });
});
