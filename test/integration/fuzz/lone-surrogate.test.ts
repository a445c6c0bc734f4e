/**
 * Issue 33 item 5: a string that is not well-formed Unicode (a lone surrogate such as `"\ud83d"`,
 * which JSON allows) reached DynamoDB, which refused it with InternalFailure: a 500. Now any body
 * string or key holding one, at any depth, is a 400 schema error naming the top-level field
 * (§1.8, functions/middleware/validate.ts), on every route alike, and nothing is written.
 */
import { describe, expect, it } from '@jest/globals';
import { readEvents } from '../../support/events.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import type { Response } from '../../support/api.js';

const api = useApi({ config: oneAgentConfig });

const HIGH = '\ud83d';
const LOW = '\ude00';

const newChat = async (extra: Record<string, unknown> = {}) => {
  const res = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', ...extra });
  expect([res.status, res.body?.error]).toEqual([201, undefined]);
  return res.body as { id: string; title: string };
};
const messages = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}/messages?limit=200`)).body.data;
const requests = async (chatId: string) =>
  (await api.get(`/api/v1/chats/${chatId}/requests?status=all`)).body.data as any[];
const eventCount = async () => (await readEvents(api.tableName)).length;

/** A 400 schema error (§1.8) naming exactly `field`. */
function expectFieldError(res: Response, field: string): void {
  expect([res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([
    400,
    'VALIDATION_ERROR',
    'Request validation failed.',
  ]);
  expect(res.body.error.details.formErrors).toEqual([]);
  expect(Object.keys(res.body.error.details.fieldErrors)).toEqual([field]);
}

describe('lone surrogates in a body (issue 33 item 5)', () => {
  it('refuses one in a message trace key (nested), in its content and in a trace array, writing nothing', async () => {
    const chat = await newChat();
    const events = await eventCount();
    const path = `/api/v1/chats/${chat.id}/messages`;
    const cases: [body: Record<string, unknown>, field: string][] = [
      [{ role: 'agent', senderId: 'assistant', content: 'hi', trace: { [HIGH]: 1 } }, 'trace'],
      [{ role: 'agent', senderId: 'assistant', content: 'hi', trace: { a: { b: { [LOW]: 'x' } } } }, 'trace'],
      [{ role: 'agent', senderId: 'assistant', content: 'hi', trace: { list: ['ok', [`x${HIGH}`]] } }, 'trace'],
      [{ role: 'user', content: `broken ${HIGH} text` }, 'content'],
      [{ role: 'agent', senderId: `assistant${LOW}`, content: 'hi' }, 'senderId'],
    ];
    for (const [body, field] of cases) {
      const res = await api.post(path, body);
      expectFieldError(res, field);
    }
    expect(await messages(chat.id)).toEqual([]);
    expect(await eventCount()).toBe(events);
    // A surrogate pair (an emoji) is well-formed, as a key and as a value.
    const ok = await api.post(path, { role: 'user', content: 'fine 😀', trace: { '😀': ['😀'] } });
    expect([ok.status, ok.body.content_final, ok.body.trace]).toEqual([201, 'fine 😀', { '😀': ['😀'] }]);
  });

  it('refuses one in a request trace, title or config, on create and on PATCH, writing nothing', async () => {
    const chat = await newChat();
    const base = { type: 'text_input', title: 'Name?', config: {} };
    const path = `/api/v1/chats/${chat.id}/requests`;
    expectFieldError(await api.post(path, { ...base, trace: { deep: { [HIGH]: true } } }), 'trace');
    expectFieldError(await api.post(path, { ...base, title: `Name${LOW}?` }), 'title');
    expectFieldError(await api.post(path, { ...base, config: { placeholder: HIGH } }), 'config');
    expect(await requests(chat.id)).toEqual([]);

    const created = await api.post(path, base);
    expect(created.status).toBe(201);
    const events = await eventCount();
    const patch = (body: unknown) => api.patch(`/api/v1/requests/${created.body.id}`, body);
    expectFieldError(await patch({ trace: { [LOW]: 1 } }), 'trace');
    expectFieldError(await patch({ body: `b${HIGH}` }), 'body');
    const resolve = await api.post(`/api/v1/requests/${created.body.id}/resolve`, { text: `Ann${HIGH}` });
    expectFieldError(resolve, 'text');
    expect(await requests(chat.id)).toEqual([created.body]);
    expect(await eventCount()).toBe(events);
  });

  it('refuses one in a chat title, tags, and a first message, creating and changing nothing', async () => {
    const before = (await api.get('/api/v1/chats?limit=100')).body.data.length;
    expectFieldError(
      await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', title: `T${HIGH}` }),
      'title',
    );
    expectFieldError(
      await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm', firstMessage: `hi${LOW}` }),
      'firstMessage',
    );
    expect((await api.get('/api/v1/chats?limit=100')).body.data.length).toBe(before);

    const chat = await newChat({ title: 'Kept' });
    const events = await eventCount();
    expectFieldError(await api.patch(`/api/v1/chats/${chat.id}`, { title: `New${HIGH}` }), 'title');
    expectFieldError(await api.patch(`/api/v1/chats/${chat.id}`, { tags: ['ok', `t${LOW}`] }), 'tags');
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.title).toBe('Kept');
    expect(await eventCount()).toBe(events);
  });

  it("refuses one in an upload's JSON fileName (a body the route reads itself)", async () => {
    const chat = await newChat();
    const res = await api.post(`/api/v1/chats/${chat.id}/media`, {
      fileName: `a${HIGH}.txt`,
      contentType: 'text/plain',
      base64Data: Buffer.from('hello').toString('base64'),
    });
    expectFieldError(res, 'fileName');
    expect((await api.get(`/api/v1/chats/${chat.id}/media`)).body.data).toEqual([]);
  });

  it('ignores one in an unknown field, as it ignores the field (§1.2)', async () => {
    const chat = await newChat();
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'hi', [HIGH]: HIGH });
    expect([res.status, res.body.content_final]).toEqual([201, 'hi']);
  });
});
