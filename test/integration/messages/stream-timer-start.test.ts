/**
 * When a new stream's check starts (functions/platform/stream-timer.ts mayStartBesideCommit):
 * beside the create's commit when the check comes 30 s or more later (one round trip less),
 * after it otherwise. The starter is replaced by one that holds its promise until released, so
 * the order is visible: a check sent beside the commit does not hold the commit up. A spy on the
 * document client counts the transactions sent (passing every call through).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { checkStream } from '../../../functions/jobs/check-stream.js';
import { getConfig } from '../../../functions/core/instance-config.js';
import { installStreamTimer } from '../../../functions/platform/stream-timer.js';
import type { StreamTimerInput } from '../../../functions/platform/stream-timer.js';
import { useApi } from '../../support/api.js';
import { eventually } from '../../support/wait.js';

const baseConfig = {
  agents: [{ id: 'assistant', name: 'Assistant', description: '' }],
  models: [{ id: 'm', name: 'M', description: '' }],
};
const api = useApi({ config: baseConfig });
let transactionsSent = 0;
let failNextTransaction = false;
beforeAll(() => {
  const send = DynamoDBDocumentClient.prototype.send;
  jest.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(function (
    this: DynamoDBDocumentClient,
    ...args: unknown[]
  ) {
    if (args[0] instanceof TransactWriteCommand) {
      transactionsSent += 1;
      if (failNextTransaction) {
        failNextTransaction = false;
        return Promise.reject(new Error('injected: the transaction failed'));
      }
    }
    return (send as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
});
afterAll(() => {
  installStreamTimer(undefined);
});
afterEach(() => installStreamTimer(undefined));

interface Started {
  input: StreamTimerInput;
  /** Transactions sent since the create began, when the starter was called. */
  transactionsAtCall: number;
  release: () => void;
}

/** A check starter that records each start and holds it until released. */
function holdingStarter(): Started[] {
  const started: Started[] = [];
  const noLoop = async () => undefined;
  const before = transactionsSent;
  installStreamTimer({
    check: async (input) => {
      const transactionsAtCall = transactionsSent - before;
      await new Promise<void>((release) => started.push({ input, transactionsAtCall, release }));
    },
    loop: noLoop,
  });
  return started;
}

const createStream = (chatId: string) =>
  api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'assistant', streaming: true });

describe.each([
  { timeout: 60, beside: true },
  { timeout: 30, beside: true },
  { timeout: 29, beside: false },
])('with streamTimeoutSeconds $timeout', ({ timeout, beside }) => {
  it(beside ? 'sends the check beside the commit' : 'sends the check after the commit', async () => {
    api.setConfig({ ...baseConfig, server: { streamTimeoutSeconds: timeout } });
    const chat = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
    const started = holdingStarter();
    let answered = false;
    const create = createStream(chat.id).then((res) => {
      answered = true;
      return res;
    });
    // The starter is called (and held); the create waits for it either way.
    await eventually(
      () => started.length,
      (n) => n > 0,
      { timeoutMs: 2000, intervalMs: 10, what: 'the starter called' },
    );
    expect(started).toHaveLength(1);
    expect(started[0]!.input.waitSeconds).toBe(timeout);
    // Beside: called before the commit's transaction was sent; after: once it was.
    expect(started[0]!.transactionsAtCall).toBe(beside ? 0 : 1);
    // The commit does not wait for a check sent beside it: the message is there while the check is held.
    await eventually(
      async () => (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data.length,
      (n) => n === 1,
      { timeoutMs: 2000, intervalMs: 10, what: 'the message stored' },
    );
    expect((await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data).toHaveLength(1);
    expect(answered).toBe(false);
    started[0]!.release();
    const res = await create;
    expect(res.status).toBe(201);
    expect(res.body.id).toBe(started[0]!.input.messageId);
  });
});

it('a check sent beside a create whose commit fails finds no stream to end', async () => {
  api.setConfig({ ...baseConfig, server: { streamTimeoutSeconds: 60 } });
  const chat = (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
  const started = holdingStarter();
  failNextTransaction = true;
  const create = createStream(chat.id);
  await eventually(
    () => started.length,
    (n) => n > 0,
    { timeoutMs: 2000, intervalMs: 10, what: 'the starter called' },
  );
  expect(started).toHaveLength(1);
  started[0]!.release();
  const res = await create;
  expect([res.status, res.body.error?.code]).toEqual([500, 'INTERNAL_ERROR']);
  expect((await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data).toHaveLength(0);
  // The check, when it comes, finds no such stream: nothing to end, no loop started.
  expect(await checkStream(await getConfig(), started[0]!.input.messageId)).toBe('over');
});
