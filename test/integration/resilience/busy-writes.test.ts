/**
 * Writes under sustained load on one chat (issue 25 item 3): a write never runs into its
 * function timeout (API Gateway's bare 500, nothing said about what was written). It either
 * lands, or answers early with the contract's 429 RATE_LIMIT_ERROR and Retry-After having
 * written nothing, or, when its own commit call is the one still unanswered at the end, with the
 * 500 INTERNAL_ERROR envelope (its outcome unknown) before the timeout (platform/deadline.ts).
 *
 * An event-number reservation or a rate-limit lease left unanswered (bookkeeping whose landing
 * alone is harmless) answers 429 as well.
 *
 * The first cases make DynamoDB slow and contended on purpose (SDK middleware, as in
 * ./timeouts.test.ts: the table itself is the shared DynamoDB Local); the last one is a real
 * 20-way burst of creates into one chat.
 */
import { describe, expect, it } from '@jest/globals';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { ddb } from '../../../functions/store/db.js';
import { oneAgentConfig, useApi } from '../../support/api.js';
import { readEvents } from '../../support/events.js';
import { sleep } from '../../../functions/platform/retry.js';

// The tests that wait for a request's deadline run under a shorter function timeout, the local
// runtime's setting: the same path to the same answer, sooner. A write still starts only while 7 s
// are left (platform/deadline.ts), so the two whose write must start get 13 s (6 s to reach it,
// for a loaded DynamoDB Local's seconds per call; 8 s with the route's 15), the read 9 s
// (measured alone on a loaded machine: the file 53 s before, 40 s after).
let shortTimeoutSeconds: number | undefined;
const api = useApi({ config: oneAgentConfig, functionTimeoutSeconds: () => shortTimeoutSeconds });
/** Runs `fn` with a function timeout of `seconds`. */
async function nearerDeadline<T>(seconds: number, fn: () => Promise<T>): Promise<T> {
  shortTimeoutSeconds = seconds;
  try {
    return await fn();
  } finally {
    shortTimeoutSeconds = undefined;
  }
}

const newChat = async () => (await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'm' })).body;
const agentMessage = (content: string) => ({ role: 'agent', senderId: 'assistant', content });

type Key = { pk?: unknown };
type Items = { Update?: { Key?: Key } }[];
const chatKeyOf = (chatId: string) => `CHAT#${chatId}`;
/** A key's partition, whether the document client has marshalled the input yet or not. */
const pkOf = (key: Key | undefined) => (key?.pk as { S?: string } | undefined)?.S ?? key?.pk;

/**
 * Until removed, every transaction that updates the chat takes `delayMs` and then loses its
 * race: DynamoDB cancels it because the chat moved meanwhile (its condition failed, the chat as
 * it is returned), as a chat written by many others at once does. Nothing is written.
 */
function keepLosingTheChat(chatId: string, delayMs: number): { attempts: () => number; remove: () => void } {
  let attempts = 0;
  ddb().middlewareStack.add(
    (next, context) => async (args) => {
      const items = (args.input as { TransactItems?: Items }).TransactItems;
      const at = items?.findIndex((i) => pkOf(i.Update?.Key) === chatKeyOf(chatId)) ?? -1;
      if (context.commandName !== 'TransactWriteItemsCommand' || at < 0) return next(args);
      attempts++;
      await sleep(delayMs); // kept (time is the behavior): the injected slow transaction
      const chat = await ddb().send(
        new GetCommand({ TableName: api.tableName, Key: { pk: chatKeyOf(chatId), sk: 'CHAT' }, ConsistentRead: true }),
      );
      throw new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: items!.map((_, i) =>
          i === at
            ? { Code: 'ConditionalCheckFailed', Item: marshall(chat.Item!, { removeUndefinedValues: true }) }
            : { Code: 'None' },
        ),
      });
    },
    { step: 'initialize', name: 'keep-losing-the-chat', priority: 'low' },
  );
  return { attempts: () => attempts, remove: () => ddb().middlewareStack.remove('keep-losing-the-chat') };
}

describe('a chat that keeps moving under a write', () => {
  it('a message create answers 429 with Retry-After before its timeout, having written nothing', async () => {
    const chat = await newChat();
    expect((await api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage('before'))).status).toBe(201);
    const eventsBefore = (await readEvents(api.tableName)).length;
    // Each try takes 2 s and loses: ten of them (the create's own limit) would take 20 s; tries
    // start while 7 s are left of the 13 s: about three.
    const fault = keepLosingTheChat(chat.id, 2000);
    let res;
    try {
      res = await nearerDeadline(13, () => api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage('under load')));
    } finally {
      fault.remove();
    }
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toEqual({
      error: {
        code: 'RATE_LIMIT_ERROR',
        message: 'Too many concurrent writes to this resource. Retry shortly.',
        details: null,
      },
    });
    // It gave up after a few tries, not after its ten.
    expect(fault.attempts()).toBeGreaterThan(1);
    expect(fault.attempts()).toBeLessThan(10);
    // Nothing written: one message, one unread, no new event (its reserved numbers are voided).
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data;
    expect(listed.map((m: { content_final: string }) => m.content_final)).toEqual(['before']);
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(1);
    expect((await readEvents(api.tableName)).slice(eventsBefore)).toEqual([]);
    // And the chat takes writes again at once.
    expect((await api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage('after'))).status).toBe(201);
  }, 40_000);
});

describe('a DynamoDB call still unanswered near the timeout', () => {
  /** Until released, the matching call of the chat hangs (DynamoDB itself is fine). */
  function hang(command: string, chatId: string) {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { Key?: Key; TransactItems?: Items };
        const touches =
          pkOf(input.Key) === chatKeyOf(chatId) ||
          (input.TransactItems ?? []).some((i) => pkOf(i.Update?.Key) === chatKeyOf(chatId));
        if (context.commandName === command && touches) await gate;
        return next(args);
      },
      { step: 'initialize', name: 'hang', priority: 'low' },
    );
    return () => {
      release();
      ddb().middlewareStack.remove('hang');
    };
  }

  it('a read is given up with 429 and Retry-After inside the function timeout', async () => {
    const chat = await newChat();
    const release = hang('GetItemCommand', chat.id);
    let res;
    try {
      res = await nearerDeadline(9, () => api.post(`/api/v1/chats/${chat.id}/mark-read`));
    } finally {
      release();
    }
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error.code).toBe('RATE_LIMIT_ERROR');
  }, 40_000);

  it('a read whose every attempt timed out answers 429 with Retry-After, not 500', async () => {
    const chat = await newChat();
    // As the SDK throws once every attempt timed out (DynamoDB Local slow to accept connections).
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: Key }).Key;
        if (context.commandName !== 'GetItemCommand' || pkOf(key) !== chatKeyOf(chat.id)) return next(args);
        throw Object.assign(new Error('Socket timed out without establishing a connection within 2000 ms'), {
          name: 'TimeoutError',
        });
      },
      { step: 'initialize', name: 'read-times-out', priority: 'low' },
    );
    let res;
    try {
      res = await api.get(`/api/v1/chats/${chat.id}`);
    } finally {
      ddb().middlewareStack.remove('read-times-out');
    }
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error.code).toBe('RATE_LIMIT_ERROR');
  }, 40_000);

  it("the write's own commit answers the 500 envelope (its outcome unknown), not the timeout's bare 500", async () => {
    const chat = await newChat();
    const release = hang('TransactWriteItemsCommand', chat.id);
    let res;
    try {
      res = await nearerDeadline(13, () => api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage('uncertain')));
    } finally {
      release();
    }
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'Unexpected server error.', details: null } });
  }, 40_000);
});

describe('a bookkeeping write DynamoDB does not answer in time', () => {
  it("an event-number reservation's timeout answers 429 with Retry-After, having written nothing", async () => {
    const chat = await newChat();
    const eventsBefore = (await readEvents(api.tableName)).length;
    // As the SDK throws once every attempt of a call timed out (the call may have been applied).
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: Key }).Key;
        if (context.commandName !== 'UpdateItemCommand' || pkOf(key) !== 'SEQ') return next(args);
        await next(args);
        throw Object.assign(new Error('a request has exceeded the configured 4000 ms requestTimeout.'), {
          name: 'TimeoutError',
        });
      },
      { step: 'initialize', name: 'sequence-times-out', priority: 'low' },
    );
    let res;
    try {
      res = await api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage('unreserved'));
    } finally {
      ddb().middlewareStack.remove('sequence-times-out');
    }
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.error.code).toBe('RATE_LIMIT_ERROR');
    expect((await api.get(`/api/v1/chats/${chat.id}/messages`)).body.data).toEqual([]);
    expect((await readEvents(api.tableName)).slice(eventsBefore)).toEqual([]);
  }, 40_000);
});

describe('20 writers at once into one chat', () => {
  it('every answer is 201 or 429 with Retry-After, and every 201 is stored exactly once', async () => {
    const chat = await newChat();
    const created: string[] = [];
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        for (let i = 0; i < 5; i++) {
          const res = await api.post(`/api/v1/chats/${chat.id}/messages`, agentMessage(`w${w} m${i}`));
          statuses.push(res.status);
          if (res.status === 201) created.push(res.body.id);
          else {
            expect(res.status).toBe(429);
            expect(res.headers.get('retry-after')).toBe('1');
            expect(res.body.error.code).toBe('RATE_LIMIT_ERROR');
          }
        }
      }),
    );
    expect(statuses).toHaveLength(100);
    const listed = (await api.get(`/api/v1/chats/${chat.id}/messages?limit=100`)).body.data.map(
      (m: { id: string }) => m.id,
    );
    expect([...listed].sort()).toEqual([...created].sort());
    expect((await api.get(`/api/v1/chats/${chat.id}`)).body.unread_count).toBe(created.length);
  }, 120_000);
});
