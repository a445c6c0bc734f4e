/**
 * Races staged inside a request on a busy chat (issue 17 finding 5): a message landing between a
 * pin's read and its write keeps the list order right; a write the chat keeps moving under gives
 * up with 429 and Retry-After, having changed nothing, and lands when retried. Sources only
 * (test/rehearsal/suite.js SOURCE_ONLY): a middleware on the document client of the test's own
 * process makes the other write land just before the request's transaction goes out.
 * contention.test.ts covers the concurrent writes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { configOf, useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';

const api = useApi({ config: configOf(['alpha'], ['m', 'n']) });

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['alpha'], modelId: 'm' })).body;
const agentSays = (chatId: string, content: string) =>
  api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'alpha', content });

describe('a pin racing a new message', () => {
  afterEach(() => {
    ddb().middlewareStack.remove('message-before-pin');
  });

  it('keeps the list order right: the list key pairs the pin with the newest message', async () => {
    const older = await newChat();
    expect((await agentSays(older.id, 'older')).status).toBe(201);
    expect((await api.patch(`/api/v1/chats/${older.id}`, { pinned: true })).status).toBe(200);
    const chat = await newChat();
    // A message lands between the PATCH reading the chat and its write.
    let landed = 0;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        type Update = { Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
        const items = (args.input as { TransactItems?: { Update?: Update }[] }).TransactItems;
        const pinning = items?.some(
          (i) =>
            i.Update?.Key?.pk === `CHAT#${chat.id}` &&
            Object.values(i.Update.ExpressionAttributeValues ?? {}).some((v) => String(v).startsWith('1#')),
        );
        if (context.commandName === 'TransactWriteItemsCommand' && pinning && landed === 0) {
          landed++;
          expect((await agentSays(chat.id, 'meanwhile')).status).toBe(201);
        }
        return next(args);
      },
      { step: 'initialize', name: 'message-before-pin' },
    );
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true })).status).toBe(200);
    expect(landed).toBe(1);
    // Both pinned; this chat has the newer message, so it comes first (§1.9).
    const list = (await api.get('/api/v1/chats?limit=2')).body.data.map((c: { id: string }) => c.id);
    expect(list).toEqual([chat.id, older.id]);
  });
});

describe('a chat that keeps moving under a write', () => {
  afterEach(() => {
    ddb().middlewareStack.remove('tags-before-every-patch');
  });

  it('gives up with 429 RATE_LIMIT_ERROR and Retry-After, and changes nothing', async () => {
    const chat = await newChat();
    // Before every attempt of the PATCH commits, another tag replacement lands: the catalog
    // adjustments it computed always start from stale tags.
    let interfered = 0;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        type Update = { Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
        const items = (args.input as { TransactItems?: { Update?: Update }[] }).TransactItems;
        const patching = items?.some(
          (i) =>
            i.Update?.Key?.pk === `CHAT#${chat.id}` &&
            Object.values(i.Update.ExpressionAttributeValues ?? {}).includes('Never lands'),
        );
        if (context.commandName === 'TransactWriteItemsCommand' && patching) {
          interfered++;
          const meanwhile = await api.patch(`/api/v1/chats/${chat.id}`, { tags: [`meanwhile-${interfered}`] });
          expect(meanwhile.status).toBe(200);
        }
        return next(args);
      },
      { step: 'initialize', name: 'tags-before-every-patch' },
    );
    const before = (await readEvents(api.tableName)).length;
    const started = Date.now();
    const res = await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Never lands', tags: ['never'] });
    const took = Date.now() - started;
    ddb().middlewareStack.remove('tags-before-every-patch');
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      error: {
        code: 'RATE_LIMIT_ERROR',
        message: 'Too many concurrent writes to this resource. Retry shortly.',
        details: null,
      },
    });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(interfered).toBeGreaterThan(1);
    // Inside the route's 15 s function timeout.
    expect(took).toBeLessThan(14_000);
    const after = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(after).toMatchObject({ title: chat.title, tags: [`meanwhile-${interfered}`] });
    const appended = (await readEvents(api.tableName)).slice(before);
    expect(appended).toHaveLength(interfered);
    expect(appended.every((e) => e.type === 'chat.updated')).toBe(true);
    expect((await api.get('/api/v1/tags/suggestions?q=never')).body.data).toEqual([]);
    // The retry, once the chat is quiet, lands.
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Lands', tags: ['never'] })).status).toBe(200);
  }, 30_000);
});
