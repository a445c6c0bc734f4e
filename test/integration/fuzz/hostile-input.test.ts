/**
 * Issue 17 findings 2 and 3: sizes nobody bounded reached DynamoDB's 400 KB item limit, and some
 * trace shapes could not be marshalled, both answering 500. Each case below was a 500; now every
 * input is either stored faithfully or refused with the contract's envelope naming the field, and
 * a refusal changes nothing. The limits are docs/architecture.md "Limits" (functions/http/schemas.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { readEvents } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';

const api = useApi({ config: { ...oneAgentConfig, push: { enabled: true, subject: 'mailto:ops@example.com' } } });

const newChat = async (extra: Record<string, unknown> = {}) => {
  const res = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', ...extra });
  expect([res.status, res.body?.error]).toEqual([201, undefined]);
  return res.body as { id: string };
};
const rawPost = (path: string, json: string, headers: Record<string, string> = {}) =>
  api.post(path, undefined, { raw: json, headers });
const messages = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}/messages?limit=200`)).body.data;
const chatCount = async () => (await api.get('/api/v1/chats?limit=100')).body.data.length;

/** A 400 schema error on `field` (§1.8). */
function expectFieldError(res: Response, field: string): void {
  expect([res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([
    400,
    'VALIDATION_ERROR',
    'Request validation failed.',
  ]);
  expect(Object.keys(res.body.error.details.fieldErrors)).toEqual([field]);
}

/** `depth` nested objects around a number: `{"a":{"a":…1}}` (depth 1 is `{"a":1}`). */
const nested = (depth: number): Record<string, unknown> => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v as Record<string, unknown>;
};
const deepArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('sizes that used to reach the item limit (finding 2)', () => {
  it('bounds firstMessage like a message: 300,000 bytes are accepted, one more is 413 naming it', async () => {
    const before = await chatCount();
    const over = await api.post('/api/v1/chats', {
      agentIds: ['assistant'],
      modelId: 'm',
      firstMessage: 'é'.repeat(150_001),
    });
    expect(over.status).toBe(413);
    expect(over.body).toEqual({
      error: {
        code: 'PAYLOAD_TOO_LARGE',
        message: 'Message content exceeds 300000 bytes.',
        details: { field: 'firstMessage', maxContentBytes: 300_000 },
      },
    });
    const huge = await api.post('/api/v1/chats', {
      agentIds: ['assistant'],
      modelId: 'm',
      firstMessage: 'x'.repeat(420_000),
    });
    expect([huge.status, huge.body.error.details.field]).toEqual([413, 'firstMessage']);
    expect(await chatCount()).toBe(before);
    // Surrounding whitespace is trimmed first, as for the stored text.
    const chat = await newChat({ firstMessage: `  ${'é'.repeat(150_000)}  ` });
    const [first] = await messages(chat.id);
    expect(Buffer.byteLength(first.content_final)).toBe(300_000);
  });

  it('names content in the 413 of an over-long message', async () => {
    const chat = await newChat();
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'x'.repeat(300_001) });
    expect([res.status, res.body.error.details]).toEqual([413, { field: 'content', maxContentBytes: 300_000 }]);
    expect(await messages(chat.id)).toEqual([]);
  });

  it('stores the largest message with the largest trace (the worst case for the item and its event)', async () => {
    const chat = await newChat();
    // Empty lists in a list: the most DynamoDB bytes per byte of JSON (4 stored for "[]," 3: a list
    // is 3 bytes plus 1 per element), just under 64 KiB of JSON, about 87 KB stored.
    const trace = { a: Array.from({ length: 21_843 }, () => []) };
    expect(Buffer.byteLength(JSON.stringify(trace))).toBe(65_536);
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, {
      role: 'user',
      content: 'z'.repeat(300_000),
      trace,
    });
    expect([res.status, res.body?.error]).toEqual([201, undefined]);
    const [stored] = await messages(chat.id);
    expect(stored.trace).toEqual(trace);
    const event = (await readEvents(api.tableName)).find((e) => e.payload.messageId === res.body.id);
    expect(event?.payload.trace).toEqual(trace);
  });

  it('refuses a trace over 64 KiB of JSON on messages and requests', async () => {
    const chat = await newChat();
    const trace = { a: 'x'.repeat(65_536) };
    expectFieldError(
      await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'a', trace }),
      'trace',
    );
    const body = { type: 'text_input', title: 't', config: {}, trace };
    expectFieldError(await api.post(`/api/v1/chats/${chat.id}/requests`, body), 'trace');
    expect(await messages(chat.id)).toEqual([]);
    expect((await api.get(`/api/v1/chats/${chat.id}/requests`)).body.data).toEqual([]);
  });

  it("bounds a request's title, body and config on create and PATCH, and the resolution's text and values", async () => {
    const chat = await newChat();
    const base = { type: 'text_input', title: 't', config: {} };
    const url = `/api/v1/chats/${chat.id}/requests`;
    expectFieldError(await api.post(url, { ...base, title: 'x'.repeat(1_001) }), 'title');
    expectFieldError(await api.post(url, { ...base, body: 'é'.repeat(32_769) }), 'body');
    expectFieldError(await api.post(url, { ...base, config: { placeholder: 'x'.repeat(420_000) } }), 'config');
    expect((await api.get(url)).body.data).toEqual([]);
    // At the limits: accepted.
    const ok = await api.post(url, { ...base, title: 'x'.repeat(1_000), body: 'é'.repeat(32_768) });
    expect([ok.status, ok.body?.error]).toEqual([201, undefined]);
    const patch = (b: unknown) => api.patch(`/api/v1/requests/${ok.body.id}`, b);
    expectFieldError(await patch({ title: 'x'.repeat(420_000) }), 'title');
    expectFieldError(await patch({ body: 'x'.repeat(420_000) }), 'body');
    expectFieldError(await patch({ config: { placeholder: 'x'.repeat(420_000) } }), 'config');
    expectFieldError(await patch({ trace: { a: 'x'.repeat(420_000) } }), 'trace');
    expectFieldError(await api.post(`/api/v1/requests/${ok.body.id}/resolve`, { text: 'x'.repeat(65_537) }), 'text');
    expectFieldError(
      await api.post(`/api/v1/requests/${ok.body.id}/resolve`, { values: { a: 'x'.repeat(65_537) } }),
      'values',
    );
    const [unchanged] = (await api.get(url)).body.data;
    expect(unchanged).toEqual(ok.body);
  });

  it('bounds a typing agentId, a fail reason, agentIds and the tag-suggestion prefix', async () => {
    const chat = await newChat();
    expectFieldError(await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'a'.repeat(420_000) }), 'agentId');
    expect((await api.post(`/api/v1/chats/${chat.id}/typing`, { agentId: 'a'.repeat(1_000) })).status).toBe(204);
    const fail = { workerId: 'w', reason: 'r'.repeat(10_001), retryable: true };
    expectFieldError(await api.post('/api/v1/dispatch/AAAAAAAAAAAAAAAAAAAAA/fail', fail), 'reason');
    const before = await chatCount();
    const many = { agentIds: Array.from({ length: 101 }, () => 'assistant'), modelId: 'm' };
    expectFieldError(await api.post('/api/v1/chats', many), 'agentIds');
    expectFieldError(await api.post('/api/v1/chats', { agentIds: ['a'.repeat(1_001)], modelId: 'm' }), 'agentIds');
    expect(await chatCount()).toBe(before);
    expect((await api.post('/api/v1/chats', { ...many, agentIds: many.agentIds.slice(1) })).status).toBe(201);
    expectFieldError(await api.get(`/api/v1/tags/suggestions?q=${'q'.repeat(1_100)}`), 'q');
    const atLimit = await api.get(`/api/v1/tags/suggestions?q=${'q'.repeat(400)}`);
    expect([atLimit.status, atLimit.body]).toEqual([200, { data: [] }]);
  });
});

describe('other unbounded inputs the fuzz test found', () => {
  const P256DH = 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM';

  it('bounds a push subscription: endpoint 4,096 characters, each key 1,000', async () => {
    const endpoint = 'https://fcm.googleapis.com/fcm/send/';
    const big = { endpoint: endpoint + 'a'.repeat(4_096), keys: { p256dh: P256DH, auth: 'tBHItJI5svbpez7KI4CCXg' } };
    expectFieldError(await api.post('/api/v1/push/subscribe', big), 'endpoint');
    const bigKey = { endpoint: `${endpoint}x`, keys: { p256dh: P256DH, auth: 'a'.repeat(420_000) } };
    expectFieldError(await api.post('/api/v1/push/subscribe', bigKey), 'keys');
    const ok = await api.post('/api/v1/push/subscribe', { ...bigKey, keys: { ...bigKey.keys, auth: 'a'.repeat(22) } });
    expect([ok.status, ok.body?.error]).toEqual([201, undefined]);
    // Gone again, so the later tests' requests send no push to it.
    const removed = await api.request('DELETE', '/api/v1/push/subscribe', { endpoint: bigKey.endpoint });
    expect([removed.status, removed.body]).toEqual([200, { ok: true, removed: true }]);
  });

  it("bounds an upload's fileName and contentType (the name is part of the object key) at 255 characters", async () => {
    const chat = await newChat();
    const upload = (body: Record<string, unknown>) =>
      api.post(`/api/v1/chats/${chat.id}/media`, {
        fileName: 'a.txt',
        contentType: 'text/plain',
        base64Data: 'aGk=',
        ...body,
      });
    const longName = await upload({ fileName: `a.${'x'.repeat(420_000)}` });
    expect([longName.status, longName.body.error.details]).toEqual([400, { field: 'fileName' }]);
    const longType = await upload({ contentType: `text/plain; x=${'y'.repeat(300)}` });
    expect([longType.status, longType.body.error.details]).toEqual([400, { field: 'contentType' }]);
    const session = await api.post(`/api/v1/chats/${chat.id}/media/uploads`, {
      fileName: 'n'.repeat(256),
      contentType: 'application/octet-stream',
      byteSize: 10,
    });
    expect([session.status, session.body.error.details]).toEqual([400, { field: 'fileName' }]);
    expect((await api.get(`/api/v1/chats/${chat.id}/media`)).body.data).toEqual([]);
    const ok = await upload({ fileName: `${'n'.repeat(251)}.txt` });
    expect([ok.status, ok.body?.error]).toEqual([201, undefined]);
  });

  it('refuses an admin change whose configuration would exceed 256 KiB, and keeps the configuration', async () => {
    const agents = [{ id: 'assistant', name: 'Assistant', description: 'd'.repeat(300_000) }];
    const res = await api.patch('/api/v1/config/admin', { agents });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Config validation error: the configuration exceeds 262144 bytes of JSON.',
      details: null,
    });
    const config = await api.get('/api/v1/config');
    expect(config.body.agents.map((a: { description: string }) => a.description.length)).toEqual([0]);
  });
});

describe('trace shapes (finding 3)', () => {
  it('stores keys named after Object.prototype members faithfully, on messages, requests and events', async () => {
    const chat = await newChat();
    const trace = { constructor: { name: 'Set' }, toString: 1, hasOwnProperty: [null], valueOf: { constructor: 2 } };
    const msg = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'a', trace });
    expect([msg.status, msg.body.trace]).toEqual([201, trace]);
    expect((await messages(chat.id))[0].trace).toEqual(trace);
    const event = (await readEvents(api.tableName)).find((e) => e.payload.messageId === msg.body.id);
    expect(event?.payload.trace).toEqual(trace);
    const req = await api.post(`/api/v1/chats/${chat.id}/requests`, {
      type: 'text_input',
      title: 't',
      config: {},
      trace,
    });
    expect([req.status, req.body.trace]).toEqual([201, trace]);
    const patched = await api.patch(`/api/v1/requests/${req.body.id}`, { trace: { constructor: 'x' } });
    expect([patched.status, patched.body.trace]).toEqual([200, { constructor: 'x' }]);
  });

  it('refuses an empty key and a __proto__ key with 400 on trace, the same on messages and requests', async () => {
    const chat = await newChat();
    const req = await api.post(`/api/v1/chats/${chat.id}/requests`, { type: 'text_input', title: 't', config: {} });
    const routes = [
      (trace: string) => rawPost(`/api/v1/chats/${chat.id}/messages`, `{"role":"user","content":"a","trace":${trace}}`),
      (trace: string) =>
        rawPost(`/api/v1/chats/${chat.id}/requests`, `{"type":"text_input","title":"t","config":{},"trace":${trace}}`),
      (trace: string) =>
        api.patch(`/api/v1/requests/${req.body.id}`, undefined, {
          raw: `{"trace":${trace}}`,
          contentType: 'application/json',
        }),
    ];
    for (const send of routes) {
      for (const trace of ['{"":1}', '{"a":{"b":[{"":2}]}}', '{"__proto__":{"x":1}}', '{"a":[{"__proto__":1}]}']) {
        const res = await send(trace);
        expect([trace, res.status]).toEqual([trace, 400]);
        expect(Object.keys(res.body.error.details.fieldErrors)).toEqual(['trace']);
      }
    }
    expect(await messages(chat.id)).toEqual([]);
    expect((await api.get(`/api/v1/chats/${chat.id}/requests`)).body.data).toEqual([req.body]);
  });

  it('refuses a top-level __proto__ key on every route alike, and ignores other prototype-named unknown keys', async () => {
    const chat = await newChat();
    const routes = [
      [`/api/v1/chats/${chat.id}/typing`, '"agentId":"assistant"'],
      ['/api/v1/push/subscribe', '"endpoint":"https://fcm.googleapis.com/x","keys":{"p256dh":"a","auth":"b"}'],
      ['/api/v1/dispatch/BBBBBBBBBBBBBBBBBBBBB/heartbeat', '"workerId":"w"'],
    ] as const;
    for (const [path, base] of routes) {
      for (const value of ['1', 'null', '{"a":1}', '[]']) {
        const res = await rawPost(path, `{${base},"__proto__":${value}}`);
        expect([path, value, res.status, res.body?.error?.details]).toEqual([
          path,
          value,
          400,
          { formErrors: ['Object keys must not be "__proto__".'], fieldErrors: {} },
        ]);
      }
    }
    const typing = await rawPost(`/api/v1/chats/${chat.id}/typing`, '{"agentId":"a","constructor":1,"toString":{}}');
    expect(typing.status).toBe(204);
    // A field the loose push schema keeps, named constructor and too deep: its own error, no 500.
    const deepKept = await rawPost('/api/v1/push/subscribe', `{"constructor":${deepArrays(40)}}`);
    expect([deepKept.status, Object.keys(deepKept.body.error.details.fieldErrors)]).toEqual([400, ['constructor']]);
  });

  it('stores a trace 30 levels deep and refuses 31 or more, also with an Idempotency-Key', async () => {
    const chat = await newChat();
    const url = `/api/v1/chats/${chat.id}/messages`;
    const ok = await api.post(url, { role: 'user', content: 'a', trace: nested(30) });
    expect([ok.status, ok.body.trace]).toEqual([201, nested(30)]);
    const event = (await readEvents(api.tableName)).find((e) => e.payload.messageId === ok.body.id);
    expect(event?.payload.trace).toEqual(nested(30));
    expectFieldError(await api.post(url, { role: 'user', content: 'a', trace: nested(31) }), 'trace');
    const deep = `{"role":"user","content":"a","trace":{"d":${deepArrays(100_000)}}}`;
    expectFieldError(await rawPost(url, deep), 'trace');
    expectFieldError(await rawPost(url, deep, { 'idempotency-key': 'deep-1' }), 'trace');
    const deepTitle = `{"type":"text_input","title":${deepArrays(100_000)},"config":{}}`;
    expectFieldError(
      await rawPost(`/api/v1/chats/${chat.id}/requests`, deepTitle, { 'idempotency-key': 'deep-2' }),
      'title',
    );
    // An unknown field is ignored (§1.2), however deep.
    const ignored = await rawPost(url, `{"role":"user","content":"b","extra":${deepArrays(100_000)}}`);
    expect([ignored.status, ignored.body?.error]).toEqual([201, undefined]);
    expect((await messages(chat.id)).map((m: { content_final: string }) => m.content_final)).toEqual(['b', 'a']);
  });

  it('refuses numbers DynamoDB cannot hold and stores those at the edges of its range', async () => {
    const chat = await newChat();
    const url = `/api/v1/chats/${chat.id}/messages`;
    for (const n of ['1e300', '-1e300', '9007199254740992', '1e-131', '1e999']) {
      const res = await rawPost(url, `{"role":"user","content":"a","trace":{"n":${n}}}`);
      expect([n, res.status, Object.keys(res.body.error.details.fieldErrors)]).toEqual([n, 400, ['trace']]);
    }
    const edges = { max: 9007199254740991, min: -9007199254740991, tiny: 1e-130, zero: 0, frac: 0.1 };
    const ok = await api.post(url, { role: 'user', content: 'a', trace: edges });
    expect([ok.status, ok.body.trace]).toEqual([201, edges]);
    expect((await messages(chat.id))[0].trace).toEqual(edges);
  });

  it('resolves form fields named after prototype members, and refuses a field named __proto__', async () => {
    const chat = await newChat();
    const config = {
      fields: [
        { name: 'constructor', type: 'text' },
        { name: 'toString', type: 'text' },
      ],
    };
    const form = await api.post(`/api/v1/chats/${chat.id}/requests`, { type: 'form', title: 'f', config });
    expect(form.status).toBe(201);
    // toString is omitted: not "given" by Object.prototype.
    const resolved = await api.post(`/api/v1/requests/${form.body.id}/resolve`, { values: { constructor: 'x' } });
    expect([resolved.status, resolved.body.resolution_payload]).toEqual([200, { values: { constructor: 'x' } }]);
    const proto = { fields: [{ name: '__proto__', type: 'text' }] };
    const refused = await api.post(`/api/v1/chats/${chat.id}/requests`, { type: 'form', title: 'f', config: proto });
    expect([refused.status, refused.body.error.details]).toEqual([400, { field: 'config.fields[0].name' }]);
  });
});
