/**
 * POST /api/v1/requests/{requestId}/resolve and /cancel (contract §4.3, §5.5.4, §5.5.5):
 * responses, per-type payload validation and check order, resolvedBy, the pending count and
 * updated_at of the chat (§3.2, §3.6), pending-summary (§3.5), the request.resolved and
 * request.cancelled events (§6.2) and the request_resolved dispatch input (§4.4.1).
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince } from '../../support/events.js';
import { ID, ISO, REQUEST_KEYS, UNKNOWN_ID } from '../../support/shapes.js';
import { choiceBody, expectRequestNotFound, formBody, requestsApi, ruleError, textBody } from './support.js';
import { laterMillisecond } from '../../support/wait.js';

const { api, h } = requestsApi();

const ABC_OPTIONS = [
  { id: 'a', label: 'A' },
  { id: 'b', label: 'B' },
  { id: 'c', label: 'C' },
];

type Case = [label: string, body: unknown, message: string, details: Record<string, unknown>];

/** Every case answers its 400, and the chat, requests, inputs and events stay as they were. */
async function expectResolveErrors(chatId: string, requestId: string, cases: Case[]) {
  const before = await h.snapshot(chatId);
  for (const [label, body, message, details] of cases) {
    const res = await h.resolve(requestId, body);
    expect([label, res.status, res.body?.error]).toEqual([label, 400, ruleError(message, details)]);
  }
  await h.expectUnchanged(chatId, before);
}

/**
 * Resolves (or cancels) and checks everything §5.5.4/§5.5.5 promise: the response, the chat's
 * count and updated_at, pending-summary, the one event and the dispatch inputs.
 */
async function act(kind: 'resolve' | 'cancel', request: any, body?: unknown) {
  const chatBefore = await h.getChat(request.chat_id);
  const inputsBefore = await h.dispatchInputs(request.chat_id);
  const total = await h.pendingTotal();
  const events = await h.eventCount();
  await laterMillisecond();
  const started = Date.now();
  const res = kind === 'resolve' ? await h.resolve(request.id, body) : await h.cancel(request.id);
  const ended = Date.now();
  expect([res.status, res.body?.error]).toEqual([200, undefined]);
  expect(Object.keys(res.body).sort()).toEqual(REQUEST_KEYS);

  const chat = await h.getChat(request.chat_id);
  expect(chat.pending_requests_count).toBe(chatBefore.pending_requests_count - 1);
  expect(Date.parse(chat.updated_at)).toBeGreaterThan(Date.parse(chatBefore.updated_at));
  expect(Date.parse(chat.updated_at)).toBeGreaterThanOrEqual(started - 5);
  expect(Date.parse(chat.updated_at)).toBeLessThanOrEqual(ended + 5);
  expect({ ...chat, pending_requests_count: 0, updated_at: '' }).toEqual({
    ...chatBefore,
    pending_requests_count: 0,
    updated_at: '',
  });
  expect(await h.pendingTotal()).toBe(total - 1);

  const emitted = await eventsSince(api.tableName, events);
  expect(emitted.map((e) => e.type)).toEqual([kind === 'resolve' ? 'request.resolved' : 'request.cancelled']);
  expect(emitted[0]!.id).toMatch(ID);
  expect(emitted[0]!.timestamp).toMatch(ISO);
  const inputs = await h.dispatchInputs(request.chat_id);
  return {
    res,
    started,
    ended,
    event: emitted[0]!,
    newInputs: inputs.slice(inputsBefore.length),
    inputs,
    inputsBefore,
  };
}

/**
 * A resolution's request.resolved event (§6.2, the payload under both spellings) and its one
 * dispatch input (§4.4.1).
 */
function expectResolutionRecorded(
  event: { payload: unknown },
  newInputs: Record<string, any>[],
  r: {
    chatId: string;
    requestId: string;
    type: string;
    title: string;
    senderId: string;
    inputSenderId: string;
    payload: unknown;
    trace: unknown;
  },
) {
  expect(event.payload).toStrictEqual({
    chatId: r.chatId,
    requestId: r.requestId,
    type: r.type,
    title: r.title,
    status: 'resolved',
    senderId: r.senderId,
    resolution_payload: r.payload,
    resolutionPayload: r.payload,
    trace: r.trace,
  });
  expect(newInputs).toHaveLength(1);
  expect(newInputs[0]).toMatchObject({
    source_kind: 'request_resolved',
    source_id: r.requestId,
    sender_id: r.inputSenderId,
    request_type: r.type,
    request_title: r.title,
    resolution_payload: r.payload,
  });
}

describe('resolve: success per type', () => {
  it('resolves a choice request as the user by default, storing only selectedOptionIds', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ title: ' Deploy? ', trace: { workflow: 'deploy' } }));
    const { res, started, ended, event, newInputs } = await act('resolve', request, {
      selectedOptionIds: ['yes'],
      text: 'ignored',
      values: { a: 1 },
      note: 'ignored',
    });
    const resolved = res.body;
    expect(resolved).toEqual({
      ...request,
      status: 'resolved',
      resolved_at: resolved.resolved_at,
      resolved_by: 'user',
      resolution_payload: { selectedOptionIds: ['yes'] },
    });
    expect(resolved.resolved_at).toMatch(ISO);
    expect(Date.parse(resolved.resolved_at)).toBeGreaterThanOrEqual(started - 5);
    expect(Date.parse(resolved.resolved_at)).toBeLessThanOrEqual(ended + 5);
    expect(await h.list(chat.id, 'resolved')).toEqual([resolved]);
    expect(await h.list(chat.id, 'pending')).toEqual([]);

    expectResolutionRecorded(event, newInputs, {
      chatId: chat.id,
      requestId: request.id,
      type: 'choice',
      title: 'Deploy?',
      senderId: 'user',
      inputSenderId: 'user:primary',
      payload: { selectedOptionIds: ['yes'] },
      trace: { workflow: 'deploy' },
    });
  });

  it(
    'resolves a multi-select choice keeping the given order, and an empty selection when minSelections ' + 'is 0',
    async () => {
      const chat = await h.newChat();
      const multi = await h.create(chat.id, choiceBody({ config: { options: ABC_OPTIONS, maxSelections: 3 } }));
      const { res } = await act('resolve', multi, { selectedOptionIds: ['c', 'a'] });
      expect(res.body.resolution_payload).toStrictEqual({ selectedOptionIds: ['c', 'a'] });
      const none = await h.create(chat.id, choiceBody());
      const { res: empty, event } = await act('resolve', none, { selectedOptionIds: [] });
      expect(empty.body.resolution_payload).toStrictEqual({ selectedOptionIds: [] });
      expect(event.payload.resolutionPayload).toStrictEqual({ selectedOptionIds: [] });
    },
  );

  it('resolves a text_input request as the backend, with the text trimmed', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, textBody());
    const { res, event, newInputs } = await act('resolve', request, {
      text: '   Ann Lee \n',
      resolvedBy: 'backend',
      selectedOptionIds: ['x'],
    });
    expect(res.body).toMatchObject({
      status: 'resolved',
      resolved_by: 'backend',
      resolution_payload: { text: 'Ann Lee' },
    });
    expect(res.body.resolution_payload).toStrictEqual({ text: 'Ann Lee' });
    expectResolutionRecorded(event, newInputs, {
      chatId: chat.id,
      requestId: request.id,
      type: 'text_input',
      title: 'Your name?',
      senderId: 'backend',
      inputSenderId: 'backend',
      payload: { text: 'Ann Lee' },
      trace: null,
    });
  });

  it('resolves a form request with resolvedBy user explicitly; a required checkbox may be false', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, formBody({ trace: { form: 1 } }));
    const values = { email: 'a@b.c', color: 'green', tags: ['y', 'x'], agree: false };
    const { res, event, newInputs } = await act('resolve', request, { values, resolvedBy: 'user', text: 'ignored' });
    expect(res.body).toMatchObject({ status: 'resolved', resolved_by: 'user' });
    expect(res.body.resolution_payload).toStrictEqual({ values });
    expectResolutionRecorded(event, newInputs, {
      chatId: chat.id,
      requestId: request.id,
      type: 'form',
      title: 'Details',
      senderId: 'user',
      inputSenderId: 'user:primary',
      payload: { values },
      trace: { form: 1 },
    });
  });

  it('accepts a form resolution omitting optional fields', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, formBody());
    const { res } = await act('resolve', request, { values: { email: 'x', agree: true } });
    expect(res.body.resolution_payload).toStrictEqual({ values: { email: 'x', agree: true } });
  });
});

describe('resolve: invalid payloads per type (400, nothing changes)', () => {
  it('choice', async () => {
    const chat = await h.newChat();
    const request = await h.create(
      chat.id,
      choiceBody({ config: { options: ABC_OPTIONS, minSelections: 1, maxSelections: 2 } }),
    );
    await expectResolveErrors(chat.id, request.id, [
      ['missing', {}, 'choice resolution requires selectedOptionIds string array.', { field: 'selectedOptionIds' }],
      [
        'no body',
        undefined,
        'choice resolution requires selectedOptionIds string array.',
        { field: 'selectedOptionIds' },
      ],
      [
        'string',
        { selectedOptionIds: 'a' },
        'choice resolution requires selectedOptionIds string array.',
        { field: 'selectedOptionIds' },
      ],
      [
        'numbers',
        { selectedOptionIds: [1] },
        'choice resolution requires selectedOptionIds string array.',
        { field: 'selectedOptionIds' },
      ],
      [
        'duplicates',
        { selectedOptionIds: ['a', 'a'] },
        'selectedOptionIds must be unique.',
        { field: 'selectedOptionIds' },
      ],
      [
        'unknown',
        { selectedOptionIds: ['a', 'q'] },
        'selectedOptionIds contains unknown option.',
        { field: 'selectedOptionIds', optionId: 'q' },
      ],
      [
        'too few',
        { selectedOptionIds: [] },
        'selectedOptionIds does not satisfy minimum selections.',
        { field: 'selectedOptionIds', minSelections: 1 },
      ],
      [
        'too many',
        { selectedOptionIds: ['a', 'b', 'c'] },
        'selectedOptionIds exceeds maximum selections.',
        { field: 'selectedOptionIds', maxSelections: 2 },
      ],
      [
        'text payload',
        { text: 'a' },
        'choice resolution requires selectedOptionIds string array.',
        { field: 'selectedOptionIds' },
      ],
    ]);
  });

  it('text_input', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, {
      type: 'text_input',
      title: 'Code',
      config: { validation: { minLength: 3, maxLength: 4, pattern: '\\d' } },
    });
    await expectResolveErrors(chat.id, request.id, [
      ['missing', {}, 'text_input resolution requires non-empty text.', { field: 'text' }],
      ['blank', { text: '   ' }, 'text_input resolution requires non-empty text.', { field: 'text' }],
      ['number', { text: 1234 }, 'text_input resolution requires non-empty text.', { field: 'text' }],
      ['short after trim', { text: '  a1  ' }, 'text is shorter than minimum length.', { field: 'text', minLength: 3 }],
      ['long', { text: 'abcd1' }, 'text is longer than maximum length.', { field: 'text', maxLength: 4 }],
      ['UTF-16 long', { text: '😀😀1' }, 'text is longer than maximum length.', { field: 'text', maxLength: 4 }],
      ['no digit', { text: 'abcd' }, 'text does not match required pattern.', { field: 'text' }],
    ]);
    // The pattern is searched, not anchored, in the trimmed text.
    const { res } = await act('resolve', request, { text: '  ab7 ' });
    expect(res.body.resolution_payload).toStrictEqual({ text: 'ab7' });
  });

  it('form', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, formBody());
    const ok = { email: 'a@b.c', agree: true };
    await expectResolveErrors(chat.id, request.id, [
      ['missing values', {}, 'form resolution requires values object.', { field: 'values' }],
      ['array values', { values: [ok] }, 'form resolution requires values object.', { field: 'values' }],
      [
        'unknown field',
        { values: { ...ok, phone: '1' } },
        'values contains unknown field.',
        { field: 'values', name: 'phone' },
      ],
      [
        'checkbox string',
        { values: { ...ok, agree: 'yes' } },
        'checkbox fields require boolean values.',
        { field: 'values.agree' },
      ],
      [
        'multiselect string',
        { values: { ...ok, tags: 'x' } },
        'multiselect fields require string array values.',
        { field: 'values.tags' },
      ],
      [
        'multiselect unknown',
        { values: { ...ok, tags: ['z'] } },
        'multiselect values contain unknown option.',
        { field: 'values.tags' },
      ],
      ['text number', { values: { ...ok, email: 3 } }, 'field value must be a string.', { field: 'values.email' }],
      [
        'select unknown',
        { values: { ...ok, color: 'blue' } },
        'select value must match one of the configured options.',
        { field: 'values.color' },
      ],
      ['missing required', { values: { agree: true } }, 'missing required form value.', { field: 'values.email' }],
      [
        'missing required checkbox',
        { values: { email: 'a' } },
        'missing required form value.',
        { field: 'values.agree' },
      ],
      [
        'blank required',
        { values: { ...ok, email: '  ' } },
        'required form value cannot be empty.',
        { field: 'values.email' },
      ],
      // §5.5.4's order: every submitted value's type before any field's presence or emptiness.
      [
        'type error beside a missing required field',
        { values: { agree: 'yes' } },
        'checkbox fields require boolean values.',
        { field: 'values.agree' },
      ],
      [
        'type error beside a blank required field',
        { values: { email: ' ', agree: true, tags: 'x' } },
        'multiselect fields require string array values.',
        { field: 'values.tags' },
      ],
    ]);
  });

  it('rejects a body that is not a JSON object', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const before = await h.snapshot(chat.id);
    for (const raw of ['[]', '"yes"', 'null']) {
      const res = await api.post(`/api/v1/requests/${request.id}/resolve`, undefined, { raw });
      expect([raw, res.status, res.body?.error?.code]).toEqual([raw, 400, 'VALIDATION_ERROR']);
    }
    await h.expectUnchanged(chat.id, before);
  });
});

describe('resolve: resolvedBy', () => {
  it('rejects any value other than user or backend, after the payload checks', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const rule = ['resolvedBy must be one of user, backend.', { field: 'resolvedBy' }] as const;
    await expectResolveErrors(chat.id, request.id, [
      ['admin', { selectedOptionIds: ['yes'], resolvedBy: 'admin' }, ...rule],
      ['case', { selectedOptionIds: ['yes'], resolvedBy: 'User' }, ...rule],
      ['user:primary', { selectedOptionIds: ['yes'], resolvedBy: 'user:primary' }, ...rule],
      ['empty', { selectedOptionIds: ['yes'], resolvedBy: '' }, ...rule],
      ['number', { selectedOptionIds: ['yes'], resolvedBy: 1 }, ...rule],
      // Present as null is not absent (only config keys treat null as absent, §2.3.1).
      ['null', { selectedOptionIds: ['yes'], resolvedBy: null }, ...rule],
      // Check 3 (payload) comes before check 4 (resolvedBy).
      [
        'bad payload too',
        { selectedOptionIds: ['nope'], resolvedBy: 'admin' },
        'selectedOptionIds contains unknown option.',
        { field: 'selectedOptionIds', optionId: 'nope' },
      ],
    ]);
  });
});

describe('resolve and cancel: not found and not pending', () => {
  it('answers 404 Request not found for unknown ids', async () => {
    for (const id of [UNKNOWN_ID, 'nope']) {
      for (const res of [await h.resolve(id, { selectedOptionIds: ['yes'] }), await h.cancel(id)]) {
        expectRequestNotFound(res, id);
      }
    }
  });

  it('refuses a second resolve, even with an invalid payload, changing nothing', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    await act('resolve', request, { selectedOptionIds: ['yes'] });
    await expectResolveErrors(chat.id, request.id, [
      [
        'same payload',
        { selectedOptionIds: ['yes'] },
        'Only pending requests can be resolved.',
        { requestId: request.id, status: 'resolved' },
      ],
      [
        'other payload',
        { selectedOptionIds: ['no'], resolvedBy: 'backend' },
        'Only pending requests can be resolved.',
        { requestId: request.id, status: 'resolved' },
      ],
      [
        'invalid payload',
        { selectedOptionIds: 'x', resolvedBy: 'admin' },
        'Only pending requests can be resolved.',
        { requestId: request.id, status: 'resolved' },
      ],
    ]);
    expect((await h.find(chat.id, request.id)).resolution_payload).toEqual({ selectedOptionIds: ['yes'] });
  });

  it('refuses to resolve a cancelled request', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, textBody());
    await act('cancel', request);
    await expectResolveErrors(chat.id, request.id, [
      [
        'valid payload',
        { text: 'Ann' },
        'Only pending requests can be resolved.',
        { requestId: request.id, status: 'cancelled' },
      ],
      ['invalid payload', {}, 'Only pending requests can be resolved.', { requestId: request.id, status: 'cancelled' }],
    ]);
  });

  it('refuses to cancel a resolved or cancelled request, changing nothing', async () => {
    const chat = await h.newChat();
    const resolved = await h.create(chat.id, formBody());
    await act('resolve', resolved, { values: { email: 'e', agree: true } });
    const cancelled = await h.create(chat.id, formBody());
    await act('cancel', cancelled);
    const before = await h.snapshot(chat.id);
    for (const [request, status] of [
      [resolved, 'resolved'],
      [cancelled, 'cancelled'],
    ] as const) {
      const res = await h.cancel(request.id);
      expect([res.status, res.body.error]).toEqual([
        400,
        ruleError('Only pending requests can be cancelled.', { requestId: request.id, status }),
      ]);
    }
    await h.expectUnchanged(chat.id, before);
  });
});

describe('cancel', () => {
  it('cancels a pending request: resolution fields stay null, one request.cancelled, no dispatch input', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ trace: { run: 'r' }, body: 'b' }));
    const { res, event, newInputs, inputs } = await act('cancel', request);
    expect(res.body).toEqual({
      ...request,
      status: 'cancelled',
      resolved_at: null,
      resolved_by: null,
      resolution_payload: null,
    });
    expect(await h.list(chat.id, 'cancelled')).toEqual([res.body]);
    expect(event.payload).toStrictEqual({
      chatId: chat.id,
      requestId: request.id,
      type: 'choice',
      status: 'cancelled',
      resolution_payload: null,
      trace: { run: 'r' },
    });
    expect(newInputs).toEqual([]);
    expect(inputs).toEqual([]);
  });

  it('cancels each type, with trace null when none was given, ignoring a body', async () => {
    const chat = await h.newChat();
    for (const body of [textBody(), formBody()]) {
      const request = await h.create(chat.id, body);
      const res = await api.post(`/api/v1/requests/${request.id}/cancel`, {
        reason: 'ignored',
        resolvedBy: 'backend',
      });
      expect([res.status, res.body.status, res.body.resolved_by]).toEqual([200, 'cancelled', null]);
    }
    const events = (await eventsSince(api.tableName, 0)).filter(
      (e) => e.type === 'request.cancelled' && e.payload.chatId === chat.id,
    );
    expect(events.map((e) => [e.payload.type, e.payload.trace, e.payload.resolution_payload])).toEqual([
      ['text_input', null, null],
      ['form', null, null],
    ]);
    expect(await h.dispatchInputs(chat.id)).toEqual([]);
  });
});

describe('pending counts across a request lifecycle', () => {
  it('tracks pending_requests_count and pending-summary through creates, resolves, cancels and failures', async () => {
    const chat = await h.newChat();
    const other = await h.newChat();
    const base = await h.pendingTotal();
    const count = async () => (await h.getChat(chat.id)).pending_requests_count;
    const [a, b, c] = [
      await h.create(chat.id, choiceBody()),
      await h.create(chat.id, textBody()),
      await h.create(chat.id, formBody()),
    ];
    await h.create(other.id, choiceBody());
    expect(await count()).toBe(3);
    expect(await h.pendingTotal()).toBe(base + 4);

    expect((await h.resolve(a.id, { selectedOptionIds: ['no'] })).status).toBe(200);
    expect(await count()).toBe(2);
    expect((await h.cancel(b.id)).status).toBe(200);
    expect(await count()).toBe(1);
    expect(await h.pendingTotal()).toBe(base + 2);

    // Failures change nothing.
    expect((await h.resolve(a.id, { selectedOptionIds: ['no'] })).status).toBe(400);
    expect((await h.cancel(a.id)).status).toBe(400);
    expect((await h.resolve(b.id, { text: 'x' })).status).toBe(400);
    expect((await h.resolve(c.id, { values: {} })).status).toBe(400);
    expect(await count()).toBe(1);
    expect(await h.pendingTotal()).toBe(base + 2);

    expect((await h.resolve(c.id, { values: { email: 'e', agree: true } })).status).toBe(200);
    expect(await count()).toBe(0);
    // Never below zero.
    expect((await h.cancel(c.id)).status).toBe(400);
    expect(await count()).toBe(0);
    expect(await h.pendingTotal()).toBe(base + 1);
    expect(await h.list(chat.id, 'pending')).toEqual([]);

    // The chat-list view agrees, and a full recompute (chat PATCH, §3.3) keeps the same count.
    expect((await api.patch(`/api/v1/chats/${chat.id}`, { pinned: true })).status).toBe(200);
    expect(await count()).toBe(0);
    expect((await api.patch(`/api/v1/chats/${other.id}`, { pinned: true })).body.pending_requests_count).toBe(1);
    const chats = (await api.get('/api/v1/chats?limit=100')).body.data as any[];
    expect(await h.pendingTotal()).toBe(chats.reduce((sum, x) => sum + x.pending_requests_count, 0));
  });

  it('each resolution writes exactly one dispatch input, in order; cancels write none', async () => {
    const chat = await h.newChat();
    const r1 = await h.create(chat.id, choiceBody());
    const r2 = await h.create(chat.id, textBody());
    const r3 = await h.create(chat.id, formBody());
    await laterMillisecond();
    expect((await h.resolve(r2.id, { text: 'Bob', resolvedBy: 'backend' })).status).toBe(200);
    await laterMillisecond();
    expect((await h.cancel(r3.id)).status).toBe(200);
    await laterMillisecond();
    expect((await h.resolve(r1.id, { selectedOptionIds: ['later'] })).status).toBe(200);
    const inputs = await h.dispatchInputs(chat.id);
    expect(
      inputs.map((i) => [
        i.source_kind,
        i.source_id,
        i.sender_id,
        i.request_type,
        i.request_title,
        i.resolution_payload,
      ]),
    ).toEqual([
      ['request_resolved', r2.id, 'backend', 'text_input', 'Your name?', { text: 'Bob' }],
      ['request_resolved', r1.id, 'user:primary', 'choice', 'Approve deploy?', { selectedOptionIds: ['later'] }],
    ]);
  });
});
