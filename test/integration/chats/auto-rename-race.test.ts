/**
 * Auto-rename (contract §10.4): a title set between the rename reading the chat and committing
 * its write wins, since the write is conditional. Sources only (test/rehearsal/suite.js
 * SOURCE_ONLY): a middleware on the document client of the test's own process sends the PATCH at
 * the moment the rename's transaction is about to go out; a deployment's rename runs in its own
 * function, where no test can stop it between two calls. auto-rename.test.ts covers the rest.
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { ddb } from '../../../functions/store/db.js';
import { useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import { startFakeProvider } from '../../support/fake-provider.js';
import type { FakeProvider } from '../../support/fake-provider.js';
import { sleep } from '../../support/shapes.js';
import { eventually } from '../../support/wait.js';

const base = {
  agents: [{ id: 'ada', name: 'Ada', description: '' }],
  models: [{ id: 'm', name: 'Model', description: '' }],
};
let fake: FakeProvider;
const api = useApi(async () => {
  fake = await startFakeProvider();
  return {
    config: {
      ...base,
      autoRename: { enabled: true, provider: 'openai', modelId: 'gpt-5.4-nano', apiKey: 'key-openai' },
    },
    env: { AUTO_RENAME_BASE_URLS: JSON.stringify(fake.baseUrls), AUTO_RENAME_TIMEOUT_MS: '1000' },
  };
});
afterAll(async () => fake?.close());

const LISBON = 'Can you help me plan a three day trip to Lisbon in May?';
const newChat = async (firstMessage: string) => {
  const res = await api.post('/api/v1/chats', { agentIds: ['ada'], modelId: 'm', firstMessage });
  expect(res.status).toBe(201);
  return res.body as { id: string };
};
const agentSays = async (chatId: string, content: string) =>
  expect((await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'ada', content })).status).toBe(
    201,
  );
const getChat = async (chatId: string) => (await api.get(`/api/v1/chats/${chatId}`)).body;

describe('a title set while a rename is under way is never overwritten', () => {
  afterEach(() => {
    ddb().middlewareStack.remove('patch-before-rename-commits');
  });

  it('a PATCH landing between the rename reading the chat and committing wins (the write is conditional)', async () => {
    const chat = await newChat(LISBON);
    let patched = 0;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        type Update = { Key?: Record<string, unknown>; ExpressionAttributeValues?: Record<string, unknown> };
        const items = (args.input as { TransactItems?: { Update?: Update }[] }).TransactItems;
        const renaming = items?.some(
          (i) =>
            i.Update?.Key?.pk === `CHAT#${chat.id}` &&
            Object.values(i.Update.ExpressionAttributeValues ?? {}).includes('auto'),
        );
        if (context.commandName === 'TransactWriteItemsCommand' && renaming && patched === 0) {
          patched++;
          const res = await api.patch(`/api/v1/chats/${chat.id}`, { title: 'Set meanwhile' });
          expect(res.status).toBe(200);
        }
        return next(args);
      },
      { step: 'initialize', name: 'patch-before-rename-commits' },
    );
    const eventsBefore = (await readEvents(api.tableName)).length;
    await agentSays(chat.id, 'Sure.');
    await fake.waitFor(1);
    await eventually(
      () => patched,
      (n) => n > 0,
      { timeoutMs: 3000, what: 'the PATCH landing' },
    );
    // Kept: an absence (no second PATCH, no rename write), observable only by waiting.
    await sleep(500);
    expect(patched).toBe(1);
    expect(await getChat(chat.id)).toMatchObject({ title: 'Set meanwhile', title_source: 'manual' });
    const appended = (await readEvents(api.tableName)).slice(eventsBefore).filter((e) => e.payload.chatId === chat.id);
    expect(appended.map((e) => e.type)).toEqual(['message.created', 'chat.updated']);
  });
});
