/**
 * Idempotency across a crash (issue 17 finding 6): the business transaction and the key's
 * completion must not be two writes a crash can separate. Simulated in process: a fault on the
 * DynamoDB client refuses every standalone write to an idempotency record after its
 * reservation (the completion or release the dead process never made), then the lock is made
 * to lapse (as it does while the process restarts), and the retry must replay the original
 * reply without writing again.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { ddb } from '../../../functions/store/db.js';
import { Keys } from '../../../functions/store/keys.js';
import { newChat, useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';

const api = useApi();

const keyed = (k: string) => ({ headers: { 'idempotency-key': k } });
const recordKey = (k: string) => Keys.idempotency(createHash('sha256').update(k).digest('hex'));

let faults: string[] = [];
afterEach(() => {
  for (const name of faults) ddb().middlewareStack.remove(name);
  faults = [];
});

/** From now on, every UpdateItem or DeleteItem outside a transaction on an idempotency record fails. */
function crashBeforeStandaloneCompletion(): { refused: () => number; restart: () => void } {
  let refused = 0;
  const name = `crash-${Math.random()}`;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: string } };
      const standalone = context.commandName === 'UpdateItemCommand' || context.commandName === 'DeleteItemCommand';
      if (standalone && String(input.Key?.pk ?? '').startsWith('IDEM#')) {
        refused += 1;
        throw new Error('simulated crash: the process died before this write');
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  faults.push(name);
  return { refused: () => refused, restart: () => ddb().middlewareStack.remove(name) };
}

/** The dead request's lock lapses (if its record is still in progress). */
async function lapseLock(k: string): Promise<void> {
  try {
    await ddb().send(
      new UpdateCommand({
        TableName: api.tableName,
        Key: recordKey(k),
        UpdateExpression: 'SET lockExpiresAt = :past',
        ConditionExpression: '#status = :inProgress',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':past': 0, ':inProgress': 'IN_PROGRESS' },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

const messagesOf = async (chatId: string) =>
  (await api.get(`/api/v1/chats/${chatId}/messages?limit=200`)).body.data as { id: string }[];
const createdEvents = async (type: string) => (await readEvents(api.tableName)).filter((e) => e.type === type);

describe('Idempotency-Key across a crash (issue 17 finding 6)', () => {
  it('POST messages: the reply is stored with the message, so a retry after the crash replays it once', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const body = { role: 'user', content: 'exactly once' };
    const fault = crashBeforeStandaloneCompletion();
    const first = await api.post(`/api/v1/chats/${chat.id}/messages`, body, keyed('crash-msg'));
    expect(first.status).toBe(201);
    // Nothing was left to write after the handler: the transaction stored the reply.
    expect(fault.refused()).toBe(0);
    fault.restart();
    await lapseLock('crash-msg');
    const events = (await createdEvents('message.created')).length;
    const retry = await api.post(`/api/v1/chats/${chat.id}/messages`, body, keyed('crash-msg'));
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect((await messagesOf(chat.id)).map((m) => m.id)).toEqual([first.body.id]);
    expect((await createdEvents('message.created')).length).toBe(events);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.last_message_preview).toBe('exactly once');
  });

  it('a request whose lock lapsed and was taken over writes nothing and answers the in-progress 409', async () => {
    const chat = (await api.post('/api/v1/chats', newChat())).body;
    const name = `takeover-${Math.random()}`;
    // Just before the business transaction is sent, another request takes the lapsed key.
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const items = (args.input as { TransactItems?: { Update?: { Key?: { pk?: string } } }[] }).TransactItems;
        if (
          context.commandName === 'TransactWriteItemsCommand' &&
          items?.some((i) => i.Update?.Key?.pk?.startsWith('IDEM#'))
        ) {
          const current = await ddb().send(
            new GetCommand({ TableName: api.tableName, Key: recordKey('taken'), ConsistentRead: true }),
          );
          await ddb().send(
            new PutCommand({ TableName: api.tableName, Item: { ...current.Item, owner: 'another-request' } }),
          );
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    faults.push(name);
    const res = await api.post(`/api/v1/chats/${chat.id}/messages`, { role: 'user', content: 'x' }, keyed('taken'));
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({
      code: 'CONFLICT',
      message: 'Idempotency request is already in progress. Retry shortly.',
      details: { field: 'Idempotency-Key', key: 'taken' },
    });
    expect(await messagesOf(chat.id)).toEqual([]);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.last_message_at).toBeNull();
  });

  /**
   * The crash, then the retry, for one keyed request: the first answer, the retry's, and
   * `count()` before and after the retry (the retry must change nothing).
   */
  async function crashAndRetry(path: string, body: unknown, k: string, count: () => Promise<number>) {
    const fault = crashBeforeStandaloneCompletion();
    const first = await api.post(path, body, keyed(k));
    fault.restart();
    await lapseLock(k);
    const before = await count();
    const events = (await readEvents(api.tableName)).length;
    const retry = await api.post(path, body, keyed(k));
    expect(retry.status).toBe(first.status);
    expect(retry.body).toEqual(first.body);
    expect(await count()).toBe(before);
    expect((await readEvents(api.tableName)).length).toBe(events);
    return { first, refused: fault.refused() };
  }

  const choice = { type: 'choice', title: 'Go?', config: { options: [{ id: 'yes', label: 'Yes' }] } };

  it('POST chats, requests, resolve, cancel, archive, mark-read, complete: each stored with its effect', async () => {
    const chatCount = async () => (await api.get('/api/v1/chats?limit=100')).body.data.length as number;
    const created = await crashAndRetry('/api/v1/chats', newChat({ title: 'Crash' }), 'crash-chat', chatCount);
    expect(created.first.status).toBe(201);
    expect(created.refused).toBe(0);
    const chatId = created.first.body.id as string;

    const requestsOf = async () => (await api.get(`/api/v1/chats/${chatId}/requests?status=all`)).body.data.length;
    const pending = async () => (await api.get(`/api/v1/chats/${chatId}`)).body.pending_requests_count as number;
    const req = await crashAndRetry(`/api/v1/chats/${chatId}/requests`, choice, 'crash-req', requestsOf);
    expect(req.first.status).toBe(201);
    expect(req.refused).toBe(0);
    expect(await pending()).toBe(1);
    const resolved = await crashAndRetry(
      `/api/v1/requests/${req.first.body.id}/resolve`,
      { selectedOptionIds: ['yes'] },
      'crash-resolve',
      pending,
    );
    expect(resolved.first.body.status).toBe('resolved');
    expect(resolved.refused).toBe(0);
    const other = (await api.post(`/api/v1/chats/${chatId}/requests`, choice)).body;
    const cancelled = await crashAndRetry(`/api/v1/requests/${other.id}/cancel`, undefined, 'crash-cancel', pending);
    expect(cancelled.first.body.status).toBe('cancelled');
    expect(cancelled.refused).toBe(0);

    const updatedAt = async () => Date.parse((await api.get(`/api/v1/chats/${chatId}`)).body.updated_at);
    for (const action of ['archive', 'mark-read']) {
      const done = await crashAndRetry(`/api/v1/chats/${chatId}/${action}`, undefined, `crash-${action}`, updatedAt);
      expect(done.first.body).toEqual({ ok: true });
      expect(done.refused).toBe(0);
    }

    const stream = (
      await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'agent-default', streaming: true })
    ).body;
    await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'hello' });
    const completes = async () => (await createdEvents('message.streaming.complete')).length;
    const completed = await crashAndRetry(`/api/v1/messages/${stream.id}/complete`, {}, 'crash-complete', completes);
    expect(completed.first.body).toMatchObject({ stream_state: 'complete', content_final: 'hello' });
    expect(completed.refused).toBe(0);
  });

  it('POST chunks: a keyed chunk is written with its reply, so a retry after the crash appends nothing', async () => {
    const chatId = (await api.post('/api/v1/chats', newChat())).body.id as string;
    const stream = (
      await api.post(`/api/v1/chats/${chatId}/messages`, { role: 'agent', senderId: 'agent-default', streaming: true })
    ).body;
    await api.post(`/api/v1/messages/${stream.id}/chunks`, { deltaText: 'one ' });
    const partial = async () => {
      const listed = (await api.get(`/api/v1/chats/${chatId}/messages`)).body.data as { id: string }[];
      return listed.find((m) => m.id === stream.id) as unknown as { content_partial: string };
    };
    const textLength = async () => (await partial()).content_partial.length;
    const chunk = await crashAndRetry(
      `/api/v1/messages/${stream.id}/chunks`,
      { deltaText: 'two ' },
      'crash-chunk',
      textLength,
    );
    expect(chunk.refused).toBe(0);
    expect(chunk.first.status).toBe(200);
    expect(chunk.first.body).toMatchObject({ id: stream.id, content_partial: 'one two ', stream_state: 'streaming' });
    // The chat-scoped path shares the handler; a later chunk continues after the replayed one.
    const next = await api.post(
      `/api/v1/chats/${chatId}/messages/${stream.id}/chunks`,
      { deltaText: 'three' },
      keyed('crash-chunk-2'),
    );
    expect(next.body.content_partial).toBe('one two three');
    expect((await partial()).content_partial).toBe('one two three');
  });
});
