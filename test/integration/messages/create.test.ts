/**
 * POST /api/v1/chats/{chatId}/messages (contract §5.4.1), the message shape (§2.2), the chat's
 * derived fields after messages (§3.2–§3.4) and the `message.created` event (§6.2).
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince, readEvents } from '../../support/events.js';
import { ddb } from '../../../functions/store/db.js';
import { twoAgentConfig, useApi } from '../../support/api.js';
import type { RequestOptions, Response } from '../../support/api.js';
import { ID, ISO, MESSAGE_KEYS, UNKNOWN_ID as UNKNOWN_CHAT, createdWith } from '../../support/shapes.js';
import { laterMillisecond } from '../../support/wait.js';

const api = useApi({ config: twoAgentConfig });

const MISSING_MEDIA = 'MMMMMMMMMMMMMMMMMMMMM';

const newChat = async (extra: Record<string, unknown> = {}) => {
  const res = await api.post('/api/v1/chats', { agentIds: ['assistant'], modelId: 'model-a', ...extra });
  expect(res.status).toBe(201);
  return res.body;
};
const send = (chatId: string, body: unknown, options?: RequestOptions) =>
  api.post(`/api/v1/chats/${chatId}/messages`, body, options);
const created = async (chatId: string, body: Record<string, unknown>) => {
  const res = await send(chatId, body);
  expect([res.status, res.body?.error]).toEqual([201, undefined]);
  return res.body;
};
const getChat = async (chatId: string) => {
  const res = await api.get(`/api/v1/chats/${chatId}`);
  expect(res.status).toBe(200);
  return res.body;
};
const listed = async (chatId: string) => {
  const res = await api.get(`/api/v1/chats/${chatId}/messages?limit=200`);
  expect(res.status).toBe(200);
  return res.body.data as any[];
};

/** The message.created event (§6.2) of `msg`: its ids and creation time, and the rest as given. */
const messageCreated = (chatId: string, msg: { id: string; created_at: string }, rest: Record<string, unknown>) => ({
  type: 'message.created',
  payload: { chatId, messageId: msg.id, createdAt: msg.created_at, ...rest },
});

/** Everything a failed create must leave alone: the chat, its messages and the event log. */
async function snapshot(chatId: string) {
  return {
    chat: await getChat(chatId),
    messages: await listed(chatId),
    events: (await readEvents(api.tableName)).length,
  };
}
async function expectUnchanged(chatId: string, before: Awaited<ReturnType<typeof snapshot>>) {
  expect(await getChat(chatId)).toEqual(before.chat);
  expect(await listed(chatId)).toEqual(before.messages);
  expect(await eventsSince(api.tableName, before.events)).toEqual([]);
}

/** A 400 rule error (§1.7) with this message and details. */
function expectRuleError(res: Response, message: string, details: Record<string, unknown>) {
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({ code: 'VALIDATION_ERROR', message, details });
}

type ErrorCase = [label: string, body: unknown, message: string, details: Record<string, unknown>];

async function expectRuleErrors(chatId: string, cases: ErrorCase[]) {
  const before = await snapshot(chatId);
  for (const [label, body, message, details] of cases) {
    const res = await send(chatId, body);
    expect([label, res.status, res.body?.error]).toEqual([label, 400, { code: 'VALIDATION_ERROR', message, details }]);
  }
  await expectUnchanged(chatId, before);
}

/** Rule errors on `senderId` for bodies with content "x", each with its role's message. */
const senderCases = (
  message: (role: string) => string,
  cases: [label: string, body: { role: string; senderId?: string; agentId?: string }][],
): ErrorCase[] =>
  cases.map(([label, body]) => [label, { ...body, content: 'x' }, message(body.role), { field: 'senderId' }]);

async function expectSchemaErrors(chatId: string, cases: [label: string, body: unknown, field: string][]) {
  const before = await snapshot(chatId);
  for (const [label, body, field] of cases) {
    const res = await send(chatId, body);
    expect([label, res.status, res.body?.error?.code, res.body?.error?.message]).toEqual([
      label,
      400,
      'VALIDATION_ERROR',
      'Request validation failed.',
    ]);
    expect([label, Array.isArray(res.body.error.details.formErrors)]).toEqual([label, true]);
    expect([label, Object.keys(res.body.error.details.fieldErrors)]).toEqual([label, expect.arrayContaining([field])]);
    expect([label, res.body.error.details.field]).toEqual([label, undefined]);
  }
  await expectUnchanged(chatId, before);
}

describe('POST /api/v1/chats/{chatId}/messages: success shapes', () => {
  it('creates a user message with every §2.2 field, the content trimmed and the chat model', async () => {
    const chat = await newChat();
    const started = Date.now();
    const res = await send(chat.id, {
      role: 'user',
      senderId: 'user:primary',
      content: '  Hello there \n ',
      modelId: 'model-b',
    });
    const msg = createdWith(res, MESSAGE_KEYS);
    expect(msg).toMatchObject({
      chat_id: chat.id,
      role: 'user',
      sender_id: 'user:primary',
      content_final: 'Hello there',
      content_partial: null,
      stream_state: 'complete',
      model_id: 'model-a',
      trace: null,
    });
    expect(msg.created_at).toMatch(ISO);
    expect(msg.updated_at).toBe(msg.created_at);
    expect(Date.parse(msg.created_at)).toBeGreaterThanOrEqual(started - 1000);
    expect(Date.parse(msg.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
    expect(await listed(chat.id)).toEqual([msg]);
  });

  it.each([
    ['agent', 'assistant'],
    ['agent', 'coder'],
    ['system', 'system'],
    ['tool', 'tool'],
  ])('creates a %s message from %s, echoing its trace', async (role, senderId) => {
    const chat = await newChat();
    const trace = { step: 3, nested: { list: [1, 'two', null, { deep: true }] }, label: 'x' };
    const res = await send(chat.id, {
      role,
      senderId,
      content: `  ${role} says hi  `,
      trace,
      modelId: 'not-a-configured-model',
    });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(MESSAGE_KEYS);
    expect(res.body).toMatchObject({
      chat_id: chat.id,
      role,
      sender_id: senderId,
      content_final: `${role} says hi`,
      content_partial: null,
      stream_state: 'complete',
      model_id: 'model-a',
      trace,
    });
    expect(res.body.created_at).toMatch(ISO);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(await listed(chat.id)).toEqual([res.body]);
  });

  it('creates a streaming agent message: streaming state, no text, trace stored', async () => {
    const chat = await newChat();
    const res = await send(chat.id, { role: 'agent', senderId: 'assistant', streaming: true, trace: { run: 'r1' } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(MESSAGE_KEYS);
    expect(res.body).toMatchObject({
      role: 'agent',
      sender_id: 'assistant',
      stream_state: 'streaming',
      content_final: null,
      content_partial: null,
      model_id: 'model-a',
      trace: { run: 'r1' },
    });
    expect(res.body.updated_at).toBe(res.body.created_at);
  });

  it('accepts absent, empty and whitespace-only content with streaming, and ignores it', async () => {
    const chat = await newChat();
    for (const extra of [{}, { content: '' }, { content: '  \n\t ' }, { stream: true, content: ' ' }]) {
      const body = {
        role: 'agent',
        senderId: 'assistant',
        ...('stream' in extra ? {} : { streaming: true }),
        ...extra,
      };
      const res = await send(chat.id, body);
      expect([JSON.stringify(extra), res.status]).toEqual([JSON.stringify(extra), 201]);
      expect(res.body).toMatchObject({ stream_state: 'streaming', content_final: null, content_partial: null });
    }
  });

  it(
    'stores a streaming message whose trace names a medium that does not exist (no linking while ' + 'streaming)',
    async () => {
      const chat = await newChat();
      const trace = { mediaIds: [MISSING_MEDIA] };
      const res = await send(chat.id, { role: 'agent', senderId: 'assistant', streaming: true, trace });
      expect(res.status).toBe(201);
      expect(res.body.trace).toEqual(trace);
    },
  );

  it(
    'accepts any trace.kind without a media reference (rule 9 is the legacy form only), keeping the trace as ' +
      'given',
    async () => {
      const chat = await newChat();
      const traces: Record<string, unknown>[] = [
        { kind: 'note' },
        { kind: 'video', step: 2 },
        // Not a string: still no check without trace.mediaId; stored, and no traceKind for dispatch (§4.4.1).
        { kind: 7 },
        { kind: null },
        { kind: { nested: ['x'] } },
      ];
      for (const trace of traces) {
        const res = await send(chat.id, { role: 'user', content: ' note this ', trace });
        expect([trace, res.status, res.body?.error]).toEqual([trace, 201, undefined]);
        expect(res.body).toMatchObject({ content_final: 'note this', stream_state: 'complete', trace });
        const stored = (await listed(chat.id)).find((m) => m.id === res.body.id);
        expect(stored?.trace).toEqual(trace);
      }
      // Any role, and while streaming.
      const agent = await send(chat.id, {
        role: 'agent',
        senderId: 'assistant',
        content: 'ok',
        trace: { kind: 'note' },
      });
      expect([agent.status, agent.body.trace]).toEqual([201, { kind: 'note' }]);
      const stream = await send(chat.id, {
        role: 'agent',
        senderId: 'assistant',
        streaming: true,
        trace: { kind: 'draft' },
      });
      expect([stream.status, stream.body.trace]).toEqual([201, { kind: 'draft' }]);
    },
  );

  it('emits the free-form trace.kind in message.created as given', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const res = await created(chat.id, { role: 'user', content: 'hi', trace: { kind: 'note' } });
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => e.type)).toEqual(['message.created']);
    expect(events[0]!.payload).toMatchObject({ messageId: res.id, trace: { kind: 'note' } });
  });

  it('a warm function does not read the chat again, yet follows a pin or model change made since', async () => {
    const chat = await newChat();
    await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'warm-up' });
    const trips = async (body: Record<string, unknown>) => {
      const res = await api.post(`/api/v1/chats/${chat.id}/messages`, body);
      expect(res.status).toBe(201);
      return res;
    };
    // Warm: the chat item is not read (its model and pin are cached; the transaction checks them).
    const reads: string[] = [];
    const name = `chat-reads-${Math.random()}`;
    ddb().middlewareStack.add(
      (next, context) => async (args) => {
        const key = (args.input as { Key?: { pk?: string; sk?: string } }).Key;
        if (context.commandName === 'GetItemCommand' && key?.pk === `CHAT#${chat.id}` && key.sk === 'CHAT')
          reads.push(key.pk);
        return next(args);
      },
      { step: 'initialize', name },
    );
    const plain = await trips({ role: 'agent', senderId: 'assistant', content: 'cached' }).finally(() =>
      ddb().middlewareStack.remove(name),
    );
    expect(reads).toEqual([]);
    expect(plain.body.model_id).toBe('model-a');
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true, modelId: 'model-b' })).status).toBe(200);
    const after = await trips({ role: 'agent', senderId: 'assistant', content: 'after the change' });
    expect(after.body.model_id).toBe('model-b');
    const got = (await api.get(`/api/v1/chats/${chat.id}`)).body;
    expect(got).toMatchObject({ pinned: true, model_id: 'model-b', last_message_preview: 'after the change' });
    expect(got.last_message_at).toBe(after.body.created_at);
    const first = (await api.get('/api/v1/chats?limit=1')).body.data[0];
    expect(first.id).toBe(chat.id);
  });

  it('snapshots the chat model at creation: a later model change affects only new messages', async () => {
    const chat = await newChat();
    const first = await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'one', modelId: 'model-b' });
    expect(first.model_id).toBe('model-a');
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { modelId: 'model-b' })).status).toBe(200);
    const second = await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'two', modelId: 'model-a' });
    expect(second.model_id).toBe('model-b');
    const models = (await listed(chat.id)).map((m) => [m.id, m.model_id]);
    expect(models).toEqual([
      [second.id, 'model-b'],
      [first.id, 'model-a'],
    ]);
  });

  it('ignores unknown body fields', async () => {
    const chat = await newChat();
    const res = await send(chat.id, { role: 'user', content: 'x', id: 'forced', chat_id: 'other', surprise: 1 });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe('forced');
    expect(res.body.chat_id).toBe(chat.id);
    expect(Object.keys(res.body).sort()).toEqual(MESSAGE_KEYS);
  });
});

describe('seed aliases and default senders (§5.4.1 [Divergence])', () => {
  it('uses agentId as the sender when senderId is absent', async () => {
    const chat = await newChat();
    const msg = await created(chat.id, { role: 'agent', agentId: 'coder', content: 'via alias' });
    expect(msg.sender_id).toBe('coder');
  });

  it('lets senderId win over agentId, whichever of them is valid', async () => {
    const chat = await newChat();
    const msg = await created(chat.id, { role: 'agent', senderId: 'coder', agentId: 'assistant', content: 'a' });
    expect(msg.sender_id).toBe('coder');
    const unknownAlias = await created(chat.id, {
      role: 'agent',
      senderId: 'assistant',
      agentId: 'ghost',
      content: 'b',
    });
    expect(unknownAlias.sender_id).toBe('assistant');
    const res = await send(chat.id, { role: 'agent', senderId: 'ghost', agentId: 'assistant', content: 'c' });
    expectRuleError(res, 'senderId must match a configured agent id for role agent.', { field: 'senderId' });
  });

  it('accepts stream:true as streaming, and lets streaming win over stream', async () => {
    const chat = await newChat();
    const viaStream = await created(chat.id, { role: 'agent', senderId: 'assistant', stream: true });
    expect(viaStream).toMatchObject({ stream_state: 'streaming', content_final: null });
    const streamingFalse = await created(chat.id, {
      role: 'agent',
      senderId: 'assistant',
      streaming: false,
      stream: true,
      content: 'plain',
    });
    expect(streamingFalse).toMatchObject({ stream_state: 'complete', content_final: 'plain' });
    const streamingTrue = await created(chat.id, {
      role: 'agent',
      senderId: 'assistant',
      streaming: true,
      stream: false,
    });
    expect(streamingTrue).toMatchObject({ stream_state: 'streaming', content_final: null });
    const streamFalse = await created(chat.id, {
      role: 'agent',
      senderId: 'assistant',
      stream: false,
      content: 'also plain',
    });
    expect(streamFalse).toMatchObject({ stream_state: 'complete', content_final: 'also plain' });
    // stream:true on a user message is a streaming start for a non-agent role.
    const userStream = await send(chat.id, { role: 'user', stream: true });
    expectRuleError(userStream, 'streaming start is only supported for role agent.', { field: 'streaming' });
  });

  it('defaults the sender by role: user → user:primary, system → system, tool → tool', async () => {
    const chat = await newChat();
    expect((await created(chat.id, { role: 'user', content: 'u' })).sender_id).toBe('user:primary');
    expect((await created(chat.id, { role: 'system', content: 's' })).sender_id).toBe('system');
    expect((await created(chat.id, { role: 'tool', content: 't' })).sender_id).toBe('tool');
  });

  it('applies the agentId alias to any role (it must still match the role)', async () => {
    const chat = await newChat();
    expect((await created(chat.id, { role: 'user', agentId: 'user:primary', content: 'u' })).sender_id).toBe(
      'user:primary',
    );
    await expectRuleErrors(chat.id, [
      [
        'user with agentId assistant',
        { role: 'user', agentId: 'assistant', content: 'u' },
        'senderId must be user:primary for role user.',
        { field: 'senderId' },
      ],
    ]);
  });

  it('answers a schema error on senderId for an agent message with neither senderId nor agentId', async () => {
    const chat = await newChat();
    await expectSchemaErrors(chat.id, [
      ['agent without sender', { role: 'agent', content: 'hi' }, 'senderId'],
      ['streaming agent without sender', { role: 'agent', streaming: true }, 'senderId'],
    ]);
  });
});

describe('validation (§5.4.1 rule table)', () => {
  it('reports shape and type errors as schema validation, creating nothing', async () => {
    const chat = await newChat();
    await created(chat.id, { role: 'user', content: 'existing' });
    await expectSchemaErrors(chat.id, [
      ['no role', { content: 'x' }, 'role'],
      ['empty body', {}, 'role'],
      ['unknown role', { role: 'bot', content: 'x' }, 'role'],
      ['role not a string', { role: 1, content: 'x' }, 'role'],
      ['senderId not a string', { role: 'user', senderId: 5, content: 'x' }, 'senderId'],
      ['content not a string', { role: 'user', content: 5 }, 'content'],
      ['streaming not a boolean', { role: 'agent', senderId: 'assistant', streaming: 'yes' }, 'streaming'],
      ['stream not a boolean', { role: 'agent', senderId: 'assistant', stream: 1 }, 'stream'],
      ['modelId not a string', { role: 'user', content: 'x', modelId: 5 }, 'modelId'],
      ['trace is an array', { role: 'user', content: 'x', trace: [{ a: 1 }] }, 'trace'],
      ['trace is a string', { role: 'user', content: 'x', trace: 'hello' }, 'trace'],
      ['trace is a number', { role: 'user', content: 'x', trace: 3 }, 'trace'],
    ]);
  });

  it('rejects a body that is not a JSON object', async () => {
    const chat = await newChat();
    const before = await snapshot(chat.id);
    for (const raw of ['null', '[1]', '"x"', '3']) {
      const res = await api.request('POST', `/api/v1/chats/${chat.id}/messages`, undefined, { raw });
      expect([raw, res.status, res.body?.error?.code]).toEqual([raw, 400, 'VALIDATION_ERROR']);
    }
    const bad = await api.request('POST', `/api/v1/chats/${chat.id}/messages`, undefined, { raw: '{"role": ' });
    expect(bad.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'Malformed JSON in request body',
      details: null,
    });
    await expectUnchanged(chat.id, before);
  });

  it('rejects an empty senderId (also through the alias)', async () => {
    const chat = await newChat();
    const cases = senderCases(
      () => 'senderId is required.',
      [
        ['user, empty senderId', { role: 'user', senderId: '' }],
        ['agent, empty senderId', { role: 'agent', senderId: '' }],
        ['agent, empty agentId', { role: 'agent', agentId: '' }],
        ['empty senderId wins over agentId', { role: 'agent', senderId: '', agentId: 'assistant' }],
      ],
    );
    await expectRuleErrors(chat.id, cases);
  });

  it("rejects a sender that does not match the role, with each role's message", async () => {
    const chat = await newChat();
    const messages: Record<string, string> = {
      user: 'senderId must be user:primary for role user.',
      agent: 'senderId must match a configured agent id for role agent.',
      system: 'senderId must be system for role system.',
      tool: 'senderId must be tool for role tool.',
    };
    const cases = senderCases(
      (role) => messages[role]!,
      [
        ['user as agent', { role: 'user', senderId: 'assistant' }],
        ['user as system', { role: 'user', senderId: 'system' }],
        ['unknown agent', { role: 'agent', senderId: 'ghost' }],
        ['agent as user', { role: 'agent', senderId: 'user:primary' }],
        ['unknown agent via alias', { role: 'agent', agentId: 'ghost' }],
        ['agent id of another case', { role: 'agent', senderId: 'Assistant' }],
        ['system as tool', { role: 'system', senderId: 'tool' }],
        ['system as agent', { role: 'system', senderId: 'assistant' }],
        ['tool as system', { role: 'tool', senderId: 'system' }],
        ['tool as user', { role: 'tool', senderId: 'user:primary' }],
      ],
    );
    await expectRuleErrors(chat.id, cases);
  });

  it('rejects streaming for every role but agent', async () => {
    const chat = await newChat();
    const m = 'streaming start is only supported for role agent.';
    await expectRuleErrors(chat.id, [
      ['user', { role: 'user', streaming: true }, m, { field: 'streaming' }],
      ['system', { role: 'system', senderId: 'system', streaming: true }, m, { field: 'streaming' }],
      ['tool', { role: 'tool', streaming: true, content: '' }, m, { field: 'streaming' }],
      ['user via stream alias', { role: 'user', senderId: 'user:primary', stream: true }, m, { field: 'streaming' }],
    ]);
  });

  it('rejects non-blank content while streaming', async () => {
    const chat = await newChat();
    const m = 'content is not allowed when streaming=true.';
    await expectRuleErrors(chat.id, [
      [
        'streaming',
        { role: 'agent', senderId: 'assistant', streaming: true, content: 'hello' },
        m,
        { field: 'content' },
      ],
      ['padded', { role: 'agent', senderId: 'assistant', streaming: true, content: '  x  ' }, m, { field: 'content' }],
      [
        'stream alias',
        { role: 'agent', agentId: 'assistant', stream: true, content: 'hello' },
        m,
        { field: 'content' },
      ],
    ]);
  });

  it('rejects blank content without media references', async () => {
    const chat = await newChat();
    const m = 'content is required when streaming is false unless trace.mediaId or trace.mediaIds is provided.';
    await expectRuleErrors(chat.id, [
      ['absent', { role: 'user' }, m, { field: 'content' }],
      ['empty', { role: 'agent', senderId: 'assistant', content: '' }, m, { field: 'content' }],
      ['whitespace', { role: 'system', content: ' \n\t ' }, m, { field: 'content' }],
      ['streaming false', { role: 'tool', content: '  ', streaming: false }, m, { field: 'content' }],
      ['trace without media', { role: 'user', content: ' ', trace: { note: 'x' } }, m, { field: 'content' }],
      // A kind alone is not a media reference.
      ['trace kind without media', { role: 'user', content: ' ', trace: { kind: 'image' } }, m, { field: 'content' }],
    ]);
  });

  it('validates trace media references', async () => {
    const chat = await newChat();
    const body = (trace: unknown) => ({ role: 'user', content: 'x', trace });
    await expectRuleErrors(chat.id, [
      [
        'mediaIds a string',
        body({ mediaIds: 'abc' }),
        'trace.mediaIds must be an array when provided.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds an object',
        body({ mediaIds: { 0: 'abc' } }),
        'trace.mediaIds must be an array when provided.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds a number',
        body({ mediaIds: 7 }),
        'trace.mediaIds must be an array when provided.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds[1] empty',
        body({ mediaIds: [MISSING_MEDIA, ''] }),
        'trace.mediaIds[1] must be a non-empty string.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds[0] a number',
        body({ mediaIds: [7] }),
        'trace.mediaIds[0] must be a non-empty string.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds[2] null',
        body({ mediaIds: ['a', 'b', null] }),
        'trace.mediaIds[2] must be a non-empty string.',
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaId empty',
        body({ mediaId: '' }),
        'trace.mediaId must be a non-empty string when provided.',
        { field: 'trace.mediaId' },
      ],
      [
        'mediaId a number',
        body({ mediaId: 12 }),
        'trace.mediaId must be a non-empty string when provided.',
        { field: 'trace.mediaId' },
      ],
      [
        'kind invalid',
        body({ mediaId: MISSING_MEDIA, kind: 'video' }),
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      [
        'kind wrong case',
        body({ mediaId: MISSING_MEDIA, kind: 'IMAGE' }),
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      [
        'kind a number',
        body({ mediaId: MISSING_MEDIA, kind: 7 }),
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      [
        'kind empty',
        body({ mediaId: MISSING_MEDIA, kind: '' }),
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      [
        'kind invalid, media-only',
        { role: 'user', content: ' ', trace: { mediaId: MISSING_MEDIA, kind: 'note' } },
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      // The trace checks run whether or not the message streams.
      [
        'streaming, mediaIds[1] empty',
        { role: 'agent', senderId: 'assistant', streaming: true, trace: { mediaIds: ['a', ''] } },
        'trace.mediaIds[1] must be a non-empty string.',
        { field: 'trace.mediaIds' },
      ],
    ]);
  });

  it('rejects a trace media reference to a medium that does not exist, creating nothing', async () => {
    const chat = await newChat();
    const m = 'A media ID in trace does not belong to this chat.';
    await expectRuleErrors(chat.id, [
      [
        'mediaIds with content',
        { role: 'user', content: 'see attached', trace: { mediaIds: [MISSING_MEDIA] } },
        m,
        { field: 'trace.mediaIds' },
      ],
      [
        'mediaIds, media only',
        { role: 'agent', senderId: 'assistant', trace: { mediaIds: [MISSING_MEDIA] } },
        m,
        { field: 'trace.mediaIds' },
      ],
      [
        'legacy mediaId',
        { role: 'user', content: ' ', trace: { mediaId: MISSING_MEDIA, kind: 'image' } },
        m,
        { field: 'trace.mediaIds' },
      ],
      [
        'not an id at all',
        { role: 'tool', content: 'x', trace: { mediaIds: ['nope'] } },
        m,
        { field: 'trace.mediaIds' },
      ],
    ]);
  });

  it('answers 404 with {chatId} for an unknown chat, creating nothing', async () => {
    const before = (await readEvents(api.tableName)).length;
    for (const chatId of [UNKNOWN_CHAT, 'not-a-chat']) {
      const res = await send(chatId, { role: 'agent', senderId: 'assistant', content: 'hello' });
      expect(res.status).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Chat not found.', details: { chatId } });
      expect((await api.get(`/api/v1/chats/${chatId}`)).status).toBe(404);
    }
    expect(await eventsSince(api.tableName, before)).toEqual([]);
  });
});

describe('order of the checks (§1.8, §5.4.1)', () => {
  it('reports schema errors before any rule or existence check', async () => {
    const res = await send(UNKNOWN_CHAT, { role: 'bot', senderId: '', content: 'x' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('Request validation failed.');
    expect(res.body.error.details.fieldErrors).toHaveProperty('role');
  });

  it('reports the first failing rule in table order', async () => {
    const chat = await newChat();
    await expectRuleErrors(chat.id, [
      // 2 before 6
      [
        'empty sender, bad mediaIds',
        { role: 'user', senderId: '', content: 'x', trace: { mediaIds: 'x' } },
        'senderId is required.',
        { field: 'senderId' },
      ],
      // 2 before 10
      [
        'empty sender, user streaming',
        { role: 'user', senderId: '', streaming: true },
        'senderId is required.',
        { field: 'senderId' },
      ],
      // 7 before 8
      [
        'mediaIds before mediaId',
        { role: 'user', content: 'x', trace: { mediaIds: [''], mediaId: '' } },
        'trace.mediaIds[0] must be a non-empty string.',
        { field: 'trace.mediaIds' },
      ],
      // 8 before 9
      [
        'mediaId before kind',
        { role: 'user', content: 'x', trace: { mediaId: '', kind: 'video' } },
        'trace.mediaId must be a non-empty string when provided.',
        { field: 'trace.mediaId' },
      ],
      // 8 before 10
      [
        'trace before streaming role',
        { role: 'system', streaming: true, trace: { mediaId: '' } },
        'trace.mediaId must be a non-empty string when provided.',
        { field: 'trace.mediaId' },
      ],
      // 10 before 11
      [
        'streaming role before content',
        { role: 'user', streaming: true, content: 'hello' },
        'streaming start is only supported for role agent.',
        { field: 'streaming' },
      ],
      // 10 before 14
      [
        'streaming role before sender',
        { role: 'tool', senderId: 'system', streaming: true },
        'streaming start is only supported for role agent.',
        { field: 'streaming' },
      ],
      // 11 before 14
      [
        'streaming content before sender',
        { role: 'agent', senderId: 'ghost', streaming: true, content: 'x' },
        'content is not allowed when streaming=true.',
        { field: 'content' },
      ],
      // 13 before 14
      [
        'blank content before sender',
        { role: 'agent', senderId: 'ghost', content: '  ' },
        'content is required when streaming is false unless trace.mediaId or trace.mediaIds is provided.',
        { field: 'content' },
      ],
      // 9 before 16
      [
        'kind before media existence',
        { role: 'user', content: 'x', trace: { mediaId: MISSING_MEDIA, kind: 'pdf' } },
        'trace.kind must be image, audio, or file when provided.',
        { field: 'trace.kind' },
      ],
      // 14 before 16
      [
        'sender before media existence',
        { role: 'system', senderId: 'tool', content: 'x', trace: { mediaIds: [MISSING_MEDIA] } },
        'senderId must be system for role system.',
        { field: 'senderId' },
      ],
    ]);
  });

  it('checks the sender (14) before the chat (15), and the chat before the media (16)', async () => {
    const before = (await readEvents(api.tableName)).length;
    const sender = { field: 'senderId' };
    const chat = { chatId: UNKNOWN_CHAT };
    const cases: [Record<string, unknown>, number, string, Record<string, unknown>][] = [
      [
        { role: 'user', senderId: 'assistant', content: 'x' },
        400,
        'senderId must be user:primary for role user.',
        sender,
      ],
      [
        { role: 'agent', senderId: 'ghost', content: 'x' },
        400,
        'senderId must match a configured agent id for role agent.',
        sender,
      ],
      [{ role: 'system', senderId: 'tool', content: 'x' }, 400, 'senderId must be system for role system.', sender],
      [{ role: 'tool', senderId: 'system', content: 'x' }, 400, 'senderId must be tool for role tool.', sender],
      [{ role: 'user', content: 'x', trace: { mediaIds: [MISSING_MEDIA] } }, 404, 'Chat not found.', chat],
      [{ role: 'user', content: ' ', trace: { mediaId: MISSING_MEDIA } }, 404, 'Chat not found.', chat],
    ];
    for (const [body, status, message, details] of cases) {
      const res = await send(UNKNOWN_CHAT, body);
      expect([body, res.status, res.body?.error]).toEqual([
        body,
        status,
        { code: status === 404 ? 'NOT_FOUND' : 'VALIDATION_ERROR', message, details },
      ]);
    }
    expect(await eventsSince(api.tableName, before)).toEqual([]);
  });
});

describe('derived chat fields after messages (§3.2–§3.4)', () => {
  it('updates preview, role, last_message_at, updated_at and unread_count per role', async () => {
    const chat = await newChat();
    expect(chat).toMatchObject({
      unread_count: 0,
      last_message_preview: null,
      last_message_role: null,
      last_message_at: null,
    });
    const steps: [Record<string, unknown>, number][] = [
      [{ role: 'user', content: '  first from user  ' }, 0],
      [{ role: 'agent', senderId: 'assistant', content: 'agent reply' }, 1],
      [{ role: 'system', content: ' system note ' }, 2],
      [{ role: 'tool', content: 'tool output' }, 3],
      [{ role: 'user', content: 'user again' }, 3],
      [{ role: 'agent', agentId: 'coder', content: 'coder reply' }, 4],
    ];
    let previous = chat;
    for (const [body, unread] of steps) {
      await laterMillisecond();
      const msg = await created(chat.id, body);
      const after = await getChat(chat.id);
      expect([body.role, after.unread_count]).toEqual([body.role, unread]);
      expect(after.last_message_preview).toBe(msg.content_final);
      expect(after.last_message_role).toBe(body.role);
      expect(after.last_message_at).toBe(msg.created_at);
      expect(after.updated_at >= msg.created_at).toBe(true);
      expect(after.updated_at > previous.updated_at).toBe(true);
      // Nothing else moves.
      expect(after).toMatchObject({
        title: chat.title,
        created_at: chat.created_at,
        last_read_at: chat.last_read_at,
        pending_requests_count: 0,
        model_id: 'model-a',
        pinned: false,
        is_archived: false,
      });
      previous = after;
    }
  });

  it('cuts the preview to the first 180 characters of the trimmed text', async () => {
    const chat = await newChat();
    const text = Array.from({ length: 250 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const msg = await created(chat.id, { role: 'agent', senderId: 'assistant', content: `  \n ${text}  ` });
    expect(msg.content_final).toBe(text);
    const after = await getChat(chat.id);
    expect(after.last_message_preview).toBe(text.slice(0, 180));
    expect(after.last_message_preview).toHaveLength(180);
    const exact = 'y'.repeat(180);
    await created(chat.id, { role: 'user', content: exact });
    expect((await getChat(chat.id)).last_message_preview).toBe(exact);
  });

  it('a streaming start keeps preview and role but sets last_message_at and counts as unread', async () => {
    const chat = await newChat();
    await created(chat.id, { role: 'user', content: 'question' });
    const before = await getChat(chat.id);
    await laterMillisecond();
    const stream = await created(chat.id, { role: 'agent', senderId: 'assistant', streaming: true });
    const after = await getChat(chat.id);
    expect(after.last_message_preview).toBe('question');
    expect(after.last_message_role).toBe('user');
    expect(after.last_message_at).toBe(stream.created_at);
    expect(after.unread_count).toBe(before.unread_count + 1);
    expect(after.updated_at > before.updated_at).toBe(true);
  });

  it('mark-read resets unread_count, and later non-user messages count again', async () => {
    const chat = await newChat();
    await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'a1' });
    await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'a2' });
    expect((await getChat(chat.id)).unread_count).toBe(2);
    await laterMillisecond();
    expect((await api.post(`/api/v1/chats/${chat.id}/mark-read`)).status).toBe(200);
    expect((await getChat(chat.id)).unread_count).toBe(0);
    await laterMillisecond();
    await created(chat.id, { role: 'tool', content: 't1' });
    expect((await getChat(chat.id)).unread_count).toBe(1);
    await created(chat.id, { role: 'user', content: 'u1' });
    expect((await getChat(chat.id)).unread_count).toBe(1);
    await created(chat.id, { role: 'system', content: 's1' });
    expect((await getChat(chat.id)).unread_count).toBe(2);
    // A recompute counts only the non-user messages after last_read_at.
    const patched = await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true });
    expect(patched.status).toBe(200);
    expect(patched.body.unread_count).toBe(2);
    expect(patched.body.last_message_preview).toBe('s1');
    expect(patched.body.last_message_role).toBe('system');
  });

  it('mark-unread forces 1, a new agent message makes 2, a PATCH recomputes to every non-user message', async () => {
    const chat = await newChat({ firstMessage: 'hello' });
    await created(chat.id, { role: 'agent', senderId: 'assistant', content: 'a1' });
    await created(chat.id, { role: 'system', content: 's1' });
    await created(chat.id, { role: 'tool', content: 't1' });
    await laterMillisecond();
    await api.post(`/api/v1/chats/${chat.id}/mark-read`);
    expect((await getChat(chat.id)).unread_count).toBe(0);
    await laterMillisecond();
    expect((await api.post(`/api/v1/chats/${chat.id}/mark-unread`)).status).toBe(200);
    const unread = await getChat(chat.id);
    expect(unread.unread_count).toBe(1);
    expect(unread.last_read_at).toBeNull();
    await laterMillisecond();
    const a2 = await created(chat.id, { role: 'agent', senderId: 'coder', content: 'a2' });
    const after = await getChat(chat.id);
    expect(after.unread_count).toBe(2);
    expect(after.last_message_at).toBe(a2.created_at);
    await created(chat.id, { role: 'user', content: 'u2' });
    expect((await getChat(chat.id)).unread_count).toBe(2);
    const patched = await api.patch(`/api/v1/chats/${chat.id}`, { tags: ['x'] });
    expect(patched.status).toBe(200);
    // a1, s1, t1, a2: last_read_at is null, so every non-user message counts.
    expect(patched.body.unread_count).toBe(4);
    expect(patched.body.last_message_preview).toBe('u2');
    expect(patched.body.last_message_role).toBe('user');
    expect((await getChat(chat.id)).unread_count).toBe(4);
  });
});

describe('events (§6.2, §6.3)', () => {
  it.each([
    [{ role: 'user', content: '  hi there ' }, 'user:primary', 'hi there', null],
    [
      { role: 'agent', senderId: 'assistant', content: 'answer', trace: { source: 'note', n: 1 } },
      'assistant',
      'answer',
      { source: 'note', n: 1 },
    ],
    [{ role: 'system', content: 'sys', trace: { a: [1] } }, 'system', 'sys', { a: [1] }],
    [{ role: 'tool', senderId: 'tool', content: 'out' }, 'tool', 'out', null],
  ])('emits exactly one message.created for %o', async (body, senderId, contentFinal, trace) => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await created(chat.id, body);
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => ({ type: e.type, payload: e.payload }))).toEqual([
      messageCreated(chat.id, msg, { role: body.role, senderId, streamState: 'complete', contentFinal, trace }),
    ]);
    expect(events[0]!.id).toMatch(ID);
    expect(events[0]!.timestamp).toMatch(ISO);
  });

  it('emits message.created with streamState streaming and contentFinal null for a stream start', async () => {
    const chat = await newChat();
    const before = (await readEvents(api.tableName)).length;
    const msg = await created(chat.id, {
      role: 'agent',
      agentId: 'coder',
      stream: true,
      trace: { mediaIds: [MISSING_MEDIA] },
    });
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => ({ type: e.type, payload: e.payload }))).toEqual([
      messageCreated(chat.id, msg, {
        role: 'agent',
        senderId: 'coder',
        streamState: 'streaming',
        contentFinal: null,
        trace: { mediaIds: [MISSING_MEDIA] },
      }),
    ]);
  });
});

describe('concurrency and idempotency', () => {
  it('50 concurrent agent messages on one chat: unread_count exactly +50, all listed', async () => {
    const chat = await newChat();
    await created(chat.id, { role: 'user', content: 'start' });
    const before = await getChat(chat.id);
    const eventsBefore = (await readEvents(api.tableName)).length;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        send(chat.id, { role: 'agent', senderId: i % 2 ? 'assistant' : 'coder', content: `reply ${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
    const ids = results.map((r) => r.body.id as string);
    expect(new Set(ids).size).toBe(50);
    const after = await getChat(chat.id);
    expect(after.unread_count).toBe(before.unread_count + 50);
    const all = await listed(chat.id);
    expect(all).toHaveLength(51);
    expect(
      all
        .map((m) => m.id)
        .slice(0, 50)
        .sort(),
    ).toEqual([...ids].sort());
    expect(after.last_message_role).toBe('agent');
    expect(ids.map((id) => all.find((m) => m.id === id)!.created_at)).toContain(after.last_message_at);
    const events = await eventsSince(api.tableName, eventsBefore);
    expect(
      events
        .filter((e) => e.type === 'message.created')
        .map((e) => e.payload.messageId)
        .sort(),
    ).toEqual([...ids].sort());
  });

  it('the same Idempotency-Key and body twice create one message', async () => {
    const chat = await newChat();
    const body = { role: 'agent', senderId: 'assistant', content: 'only once', trace: { b: 2, a: 1 } };
    const first = await send(chat.id, body, { headers: { 'Idempotency-Key': 'msg-once' } });
    expect(first.status).toBe(201);
    const afterFirst = await snapshot(chat.id);
    const second = await send(
      chat.id,
      { trace: { a: 1, b: 2 }, content: 'only once', senderId: 'assistant', role: 'agent' },
      {
        headers: { 'Idempotency-Key': 'msg-once' },
      },
    );
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    await expectUnchanged(chat.id, afterFirst);
    expect(afterFirst.messages.map((m) => m.id)).toEqual([first.body.id]);
    expect(afterFirst.chat.unread_count).toBe(1);
    // The same key with a different body is a conflict, and creates nothing.
    const other = await send(
      chat.id,
      { ...body, content: 'different' },
      { headers: { 'Idempotency-Key': 'msg-once' } },
    );
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe('CONFLICT');
    await expectUnchanged(chat.id, afterFirst);
  });

  it('a failed create releases the key: a corrected retry with the same key succeeds', async () => {
    const chat = await newChat();
    const failed = await send(
      chat.id,
      { role: 'agent', senderId: 'ghost', content: 'x' },
      { headers: { 'Idempotency-Key': 'msg-retry' } },
    );
    expect(failed.status).toBe(400);
    const retry = await send(
      chat.id,
      { role: 'agent', senderId: 'ghost', content: 'x' },
      { headers: { 'Idempotency-Key': 'msg-retry' } },
    );
    expect(retry.status).toBe(400);
    expect(retry.body.error.message).toBe('senderId must match a configured agent id for role agent.');
    expect(await listed(chat.id)).toEqual([]);
    const corrected = await send(
      chat.id,
      { role: 'agent', senderId: 'assistant', content: 'x' },
      { headers: { 'Idempotency-Key': 'msg-retry' } },
    );
    expect(corrected.status).toBe(201);
    expect((await listed(chat.id)).map((m) => m.id)).toEqual([corrected.body.id]);
  });
});
