/**
 * A chat rewrite (mark-read, mark-unread, PATCH: core/chat-recompute.ts rewrite) trusts the
 * messages it read beside the chat only when they agree with it (rewrite-reads.test.ts covers the
 * agreeing reads). Sources only (test/rehearsal/suite.js SOURCE_ONLY): a spy on the document
 * client of the test's own process stages the race that
 * check exists for: the messages are read, then a message lands, then the chat is read (so the
 * chat counts a message the first read did not see). Every call is passed through.
 */
import { afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { COUNTING_ENV, useApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';

const config = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config, env: COUNTING_ENV });

let chatId: string;
beforeAll(async () => {
  chatId = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body.id;
  const say = (content: string) =>
    api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', content });
  expect((await say('first')).status).toBe(201);
  expect((await say('second')).status).toBe(201);
});
afterEach(() => {
  jest.restoreAllMocks();
});

describe('a chat rewrite', () => {
  it('reads the messages again when one landed between the two reads, and describes that message', async () => {
    const isMessagesOf = (input: unknown) =>
      JSON.stringify(input).includes(`"pk":"CHAT#${chatId}"`) ||
      JSON.stringify((input as { ExpressionAttributeValues?: unknown }).ExpressionAttributeValues ?? {}).includes(
        chatId,
      );
    let messagesRead = 0;
    let landed: Promise<unknown> | undefined;
    const send = DynamoDBDocumentClient.prototype.send;
    jest.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(async function (
      this: DynamoDBDocumentClient,
      ...args: unknown[]
    ) {
      const command = args[0];
      const pass = () => (send as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      if (!landed && command instanceof QueryCommand && isMessagesOf(command.input)) {
        const out = await pass();
        messagesRead += 1;
        // The messages are read; now a message lands, before the chat is read.
        landed = api.post(`/api/v1/chats/${chatId}/messages`, {
          role: 'agent',
          senderId: 'assistant',
          content: 'third, landed in between',
        });
        await landed;
        return out;
      }
      if (command instanceof QueryCommand && isMessagesOf(command.input)) messagesRead += 1;
      if (
        command instanceof GetCommand &&
        JSON.stringify(command.input.Key) === JSON.stringify({ pk: `CHAT#${chatId}`, sk: 'CHAT' })
      ) {
        // The chat is read once the message has landed.
        await eventually(() => landed, Boolean, { intervalMs: 2, what: 'the message landing' });
        await landed;
      }
      return pass();
    } as never);

    const res = await api.post(`/api/v1/chats/${chatId}/mark-read`, {});
    jest.restoreAllMocks();
    expect(res.status).toBe(200);
    expect(((await landed) as { status: number }).status).toBe(201);
    const chat = (await api.get(`/api/v1/chats/${chatId}`)).body;
    expect(chat.last_message_preview).toBe('third, landed in between');
    expect(chat.last_message_role).toBe('agent');
    expect(chat.unread_count).toBe(0);
    // Read alongside, disagreeing with the chat, so read again after it.
    expect(messagesRead).toBeGreaterThanOrEqual(2);
  });
});
