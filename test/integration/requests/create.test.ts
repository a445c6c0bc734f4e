/**
 * POST /api/v1/chats/{chatId}/requests (contract §5.5.1), the Request shape (§2.3, §2.3.1),
 * its effects (§3.2 pending count, §3.6 updated_at, §6.2 request.created, no dispatch input
 * §4.4.1), GET /api/v1/chats/{chatId}/requests (§5.5.2) and idempotent creation (§1.10).
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince } from '../../support/events.js';
import { ID, ISO, REQUEST_KEYS, UNKNOWN_ID, createdWith } from '../../support/shapes.js';
import { choiceBody, expectSchemaError, formBody, requestsApi, ruleError, textBody } from './support.js';
import { laterMillisecond } from '../../support/wait.js';

const { api, h } = requestsApi();

describe('POST /api/v1/chats/{chatId}/requests: success shapes', () => {
  it(
    'creates a choice request with every §2.3 field, the title trimmed, body as given and config ' + 'normalized',
    async () => {
      const chat = await h.newChat();
      const started = Date.now();
      const res = await h.post(chat.id, {
        type: 'choice',
        title: '  Approve deploy?  ',
        body: '  Pick one \n',
        config: {
          options: [
            { id: ' yes ', label: ' Yes ', variant: 'primary', icon: 'check' },
            { id: 'no', label: 'No', variant: null },
          ],
          allowOther: true,
        },
        trace: { workflow: 'deploy', step: 3, nested: { list: [1, 'two', null] } },
        // Not part of the create body: ignored.
        id: 'forced-id',
        status: 'resolved',
        resolved_by: 'user',
        chat_id: 'other',
      });
      const request = createdWith(res, REQUEST_KEYS);
      expect(request).toEqual({
        id: request.id,
        chat_id: chat.id,
        type: 'choice',
        status: 'pending',
        title: 'Approve deploy?',
        body: '  Pick one \n',
        config: {
          options: [
            { id: 'yes', label: 'Yes', variant: 'primary' },
            { id: 'no', label: 'No' },
          ],
          maxSelections: 1,
          minSelections: 0,
        },
        created_at: request.created_at,
        resolved_at: null,
        resolved_by: null,
        resolution_payload: null,
        trace: { workflow: 'deploy', step: 3, nested: { list: [1, 'two', null] } },
        // §5.5.6: the two nullable fields a request without a deadline has.
        deadline: null,
        expired_at: null,
      });
      expect(request.config.options[1]).not.toHaveProperty('variant');
      expect(request.created_at).toMatch(ISO);
      expect(Date.parse(request.created_at)).toBeGreaterThanOrEqual(started - 1000);
      expect(Date.parse(request.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
      expect(await h.list(chat.id)).toEqual([request]);
    },
  );

  it('creates a choice request keeping explicit selection bounds', async () => {
    const chat = await h.newChat();
    const request = await h.create(
      chat.id,
      choiceBody({
        config: {
          options: [
            { id: 'a', label: 'A' },
            { id: 'b', label: 'B' },
          ],
          maxSelections: 2,
          minSelections: 1,
        },
      }),
    );
    expect(request.config).toEqual({
      options: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
      ],
      maxSelections: 2,
      minSelections: 1,
    });
  });

  it(
    'creates a text_input request with an empty config, and one with validation (null pattern kept, nulls ' +
      'dropped)',
    async () => {
      const chat = await h.newChat();
      const empty = await h.create(chat.id, { type: 'text_input', title: 'Say something', config: {} });
      expect(Object.keys(empty).sort()).toEqual(REQUEST_KEYS);
      expect(empty).toMatchObject({ type: 'text_input', status: 'pending', config: {}, body: null, trace: null });
      const full = await h.create(chat.id, {
        type: 'text_input',
        title: 'Name',
        config: {
          placeholder: 'Ann',
          validation: { minLength: 1, maxLength: null, pattern: null, flags: 'i' },
          rows: 3,
        },
      });
      expect(full.config).toStrictEqual({ placeholder: 'Ann', validation: { minLength: 1, pattern: null } });
      const patterned = await h.create(chat.id, {
        type: 'text_input',
        title: 'Code',
        config: { validation: { pattern: '^[A-Z]{3}$' }, placeholder: null },
      });
      expect(patterned.config).toStrictEqual({ validation: { pattern: '^[A-Z]{3}$' } });
      expect((await h.list(chat.id)).map((r) => r.config)).toEqual([empty.config, full.config, patterned.config]);
    },
  );

  it('creates a form request with names and options trimmed and only the given field keys kept', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, {
      type: 'form',
      title: 'Details',
      config: {
        fields: [
          { name: ' email ', type: 'text', label: 'E-mail', required: true, hint: 'dropped' },
          { name: 'color', type: 'select', options: [' red', 'green '] },
          { name: 'agree', type: 'checkbox', label: null, required: null, options: null },
        ],
        submitLabel: 'Send',
        theme: 'dark',
      },
    });
    expect(request.config).toStrictEqual({
      fields: [
        { name: 'email', type: 'text', label: 'E-mail', required: true },
        { name: 'color', type: 'select', options: ['red', 'green'] },
        { name: 'agree', type: 'checkbox' },
      ],
      submitLabel: 'Send',
    });
    expect(request).toMatchObject({
      type: 'form',
      status: 'pending',
      resolved_at: null,
      resolved_by: null,
      resolution_payload: null,
    });
  });

  it('stores body null when omitted or null, and an empty string as given', async () => {
    const chat = await h.newChat();
    expect((await h.create(chat.id, choiceBody())).body).toBeNull();
    expect((await h.create(chat.id, choiceBody({ body: null }))).body).toBeNull();
    expect((await h.create(chat.id, choiceBody({ body: '' }))).body).toBe('');
    expect((await h.list(chat.id)).map((r) => r.body)).toEqual([null, null, '']);
  });

  it('works on an archived chat', async () => {
    const chat = await h.newChat();
    expect((await api.post(`/api/v1/chats/${chat.id}/archive`)).status).toBe(200);
    await h.create(chat.id, textBody());
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(1);
  });
});

describe('create: effects', () => {
  it('increments pending_requests_count, bumps updated_at and changes nothing else on the chat', async () => {
    const chat = await h.newChat();
    await laterMillisecond();
    const started = Date.now();
    await h.create(chat.id, choiceBody());
    const ended = Date.now();
    const after = await h.getChat(chat.id);
    expect(after.pending_requests_count).toBe(1);
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(chat.updated_at));
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(started - 5);
    expect(Date.parse(after.updated_at)).toBeLessThanOrEqual(ended + 5);
    expect({ ...after, pending_requests_count: 0, updated_at: chat.updated_at }).toEqual(chat);
    await h.create(chat.id, textBody());
    await h.create(chat.id, formBody());
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(3);
  });

  it('emits exactly one request.created with { chatId, requestId, type, title } (title trimmed)', async () => {
    const chat = await h.newChat();
    for (const body of [choiceBody({ title: '  Pick  ' }), textBody(), formBody({ trace: { a: 1 }, body: 'b' })]) {
      const before = await h.eventCount();
      const request = await h.create(chat.id, body);
      const events = await eventsSince(api.tableName, before);
      expect(events.map((e) => e.type)).toEqual(['request.created']);
      expect(events[0]!.payload).toStrictEqual({
        chatId: chat.id,
        requestId: request.id,
        type: request.type,
        title: request.title,
      });
      expect(events[0]!.id).toMatch(ID);
      expect(events[0]!.timestamp).toMatch(ISO);
    }
    expect((await h.list(chat.id)).map((r) => r.title)).toEqual(['Pick', 'Your name?', 'Details']);
  });

  it('creates no dispatch input', async () => {
    const chat = await h.newChat();
    await h.create(chat.id, choiceBody());
    await h.create(chat.id, formBody());
    expect(await h.dispatchInputs(chat.id)).toEqual([]);
  });

  it('raises GET /chats/pending-summary by one per request, across chats and archived filters', async () => {
    const total = await h.pendingTotal();
    const active = await h.pendingTotal('?archived=false');
    const archived = await h.pendingTotal('?archived=true');
    const a = await h.newChat();
    const b = await h.newChat();
    await api.post(`/api/v1/chats/${b.id}/archive`);
    await h.create(a.id, choiceBody());
    await h.create(a.id, textBody());
    await h.create(b.id, formBody());
    expect(await h.pendingTotal()).toBe(total + 3);
    expect(await h.pendingTotal('?archived=false')).toBe(active + 2);
    expect(await h.pendingTotal('?archived=true')).toBe(archived + 1);
    // The summary is the sum of the chats' pending_requests_count (§3.5).
    const chats = (await api.get('/api/v1/chats?limit=100')).body.data as any[];
    expect(chats.length).toBeLessThan(100);
    expect(await h.pendingTotal()).toBe(chats.reduce((sum, c) => sum + c.pending_requests_count, 0));
  });
});

describe('create: errors', () => {
  it('checks the chat first: an unknown chat answers 404 whatever the body, and nothing is created', async () => {
    const before = await h.eventCount();
    const total = await h.pendingTotal();
    for (const body of [
      choiceBody(),
      {},
      { type: 'radio', title: '', config: 'x' },
      choiceBody({ config: { options: [] } }),
    ]) {
      const res = await h.post(UNKNOWN_ID, body);
      expect([JSON.stringify(body), res.status, res.body?.error]).toEqual([
        JSON.stringify(body),
        404,
        { code: 'NOT_FOUND', message: 'Chat not found.', details: { chatId: UNKNOWN_ID } },
      ]);
    }
    const odd = await h.post('not-an-id', {});
    expect([odd.status, odd.body.error]).toEqual([
      404,
      { code: 'NOT_FOUND', message: 'Chat not found.', details: { chatId: 'not-an-id' } },
    ]);
    expect(await eventsSince(api.tableName, before)).toEqual([]);
    expect(await h.pendingTotal()).toBe(total);
  });

  it('reports a schema error (trace null) before the chat check', async () => {
    expectSchemaError(await h.post(UNKNOWN_ID, choiceBody({ trace: null })), 'trace');
  });

  it('rejects trace null as a schema error and a non-object trace as a rule error', async () => {
    const chat = await h.newChat();
    const before = await h.snapshot(chat.id);
    expectSchemaError(await h.post(chat.id, choiceBody({ trace: null })), 'trace');
    for (const trace of [[], [{ a: 1 }], 'trace', 5, true]) {
      const res = await h.post(chat.id, choiceBody({ trace }));
      expect([JSON.stringify(trace), res.status, res.body?.error]).toEqual([
        JSON.stringify(trace),
        400,
        ruleError('trace must be a JSON object.', { field: 'trace' }),
      ]);
    }
    await h.expectUnchanged(chat.id, before);
  });

  it('rejects a body that is not a JSON object', async () => {
    const chat = await h.newChat();
    const before = await h.snapshot(chat.id);
    for (const raw of ['[]', 'null', '"text"', '{"type":']) {
      const res = await api.post(`/api/v1/chats/${chat.id}/requests`, undefined, { raw });
      expect([raw, res.status, res.body?.error?.code]).toEqual([raw, 400, 'VALIDATION_ERROR']);
    }
    await h.expectUnchanged(chat.id, before);
  });

  it(
    'answers every rule error of the type, title, body and config checks with its message and field, creating ' +
      'nothing',
    async () => {
      const chat = await h.newChat();
      const before = await h.snapshot(chat.id);
      const cases: [label: string, body: unknown, message: string, details: Record<string, unknown>][] = [
        [
          'type missing',
          { title: 'T', config: {} },
          'type must be one of choice, text_input, form.',
          { field: 'type' },
        ],
        [
          'type unknown',
          { type: 'radio', title: 'T', config: {} },
          'type must be one of choice, text_input, form.',
          { field: 'type' },
        ],
        [
          'type number',
          { type: 1, title: 'T', config: {} },
          'type must be one of choice, text_input, form.',
          { field: 'type' },
        ],
        ['title missing', { type: 'text_input', config: {} }, 'title must be a string.', { field: 'title' }],
        ['title number', { type: 'text_input', title: 7, config: {} }, 'title must be a string.', { field: 'title' }],
        ['title null', { type: 'text_input', title: null, config: {} }, 'title must be a string.', { field: 'title' }],
        [
          'title blank',
          { type: 'text_input', title: '  \n ', config: {} },
          'title cannot be empty.',
          { field: 'title' },
        ],
        [
          'body number',
          { type: 'text_input', title: 'T', body: 3, config: {} },
          'body must be a string or null.',
          { field: 'body' },
        ],
        [
          'body object',
          { type: 'text_input', title: 'T', body: { text: 'x' }, config: {} },
          'body must be a string or null.',
          { field: 'body' },
        ],
        ['config missing', { type: 'text_input', title: 'T' }, 'config must be a JSON object.', { field: 'config' }],
        [
          'config null',
          { type: 'form', title: 'T', config: null },
          'config must be a JSON object.',
          { field: 'config' },
        ],
        [
          'config array',
          { type: 'choice', title: 'T', config: [] },
          'config must be a JSON object.',
          { field: 'config' },
        ],
        // choice
        [
          'choice no options',
          choiceBody({ config: { options: [] } }),
          'choice config requires at least one option.',
          { field: 'config.options' },
        ],
        [
          'choice option not object',
          choiceBody({ config: { options: [{ id: 'a', label: 'A' }, 'b'] } }),
          'config.options[1] must be a JSON object.',
          { field: 'config.options[1]' },
        ],
        [
          'choice blank id',
          choiceBody({ config: { options: [{ id: ' ', label: 'A' }] } }),
          'config.options[0].id cannot be empty.',
          { field: 'config.options[0].id' },
        ],
        [
          'choice label number',
          choiceBody({ config: { options: [{ id: 'a', label: 1 }] } }),
          'config.options[0].label must be a string.',
          { field: 'config.options[0].label' },
        ],
        [
          'choice variant',
          choiceBody({ config: { options: [{ id: 'a', label: 'A', variant: 'loud' }] } }),
          'option.variant must be one of primary, secondary, danger.',
          { field: 'config.options[0].variant' },
        ],
        [
          'choice duplicate ids',
          choiceBody({
            config: {
              options: [
                { id: 'a', label: 'A' },
                { id: 'a ', label: 'B' },
              ],
            },
          }),
          'choice options must have unique ids.',
          { field: 'config.options', optionId: 'a' },
        ],
        [
          'choice max 0',
          choiceBody({ config: { options: [{ id: 'a', label: 'A' }], maxSelections: 0 } }),
          'config.maxSelections must be an integer >= 1.',
          { field: 'config.maxSelections' },
        ],
        [
          'choice min -1',
          choiceBody({ config: { options: [{ id: 'a', label: 'A' }], minSelections: -1 } }),
          'config.minSelections must be an integer >= 0.',
          { field: 'config.minSelections' },
        ],
        [
          'choice min > max',
          choiceBody({
            config: {
              options: [
                { id: 'a', label: 'A' },
                { id: 'b', label: 'B' },
              ],
              minSelections: 2,
            },
          }),
          'config.minSelections cannot be greater than config.maxSelections.',
          { field: 'config.minSelections' },
        ],
        // text_input
        [
          'text placeholder',
          textBody({ config: { placeholder: 1 } }),
          'config.placeholder must be a string.',
          { field: 'config.placeholder' },
        ],
        [
          'text validation',
          textBody({ config: { validation: 'strict' } }),
          'config.validation must be a JSON object.',
          { field: 'config.validation' },
        ],
        [
          'text minLength',
          textBody({ config: { validation: { minLength: -1 } } }),
          'config.validation.minLength must be an integer >= 0.',
          { field: 'config.validation.minLength' },
        ],
        [
          'text maxLength',
          textBody({ config: { validation: { maxLength: 0 } } }),
          'config.validation.maxLength must be an integer >= 1.',
          { field: 'config.validation.maxLength' },
        ],
        [
          'text min > max',
          textBody({ config: { validation: { minLength: 4, maxLength: 3 } } }),
          'config.validation.minLength cannot exceed maxLength.',
          { field: 'config.validation.minLength' },
        ],
        [
          'text pattern type',
          textBody({ config: { validation: { pattern: 3 } } }),
          'config.validation.pattern must be a string or null.',
          { field: 'config.validation.pattern' },
        ],
        [
          'text pattern invalid',
          textBody({ config: { validation: { pattern: '([a-z]' } } }),
          'config.validation.pattern must be a valid regular expression.',
          { field: 'config.validation.pattern' },
        ],
        // form
        [
          'form no fields',
          formBody({ config: { fields: [] } }),
          'form config requires at least one field.',
          { field: 'config.fields' },
        ],
        [
          'form field not object',
          formBody({ config: { fields: [3] } }),
          'config.fields[0] must be a JSON object.',
          { field: 'config.fields[0]' },
        ],
        [
          'form name missing',
          formBody({ config: { fields: [{ type: 'text' }] } }),
          'config.fields[0].name must be a string.',
          { field: 'config.fields[0].name' },
        ],
        [
          'form bad type',
          formBody({
            config: {
              fields: [
                { name: 'a', type: 'text' },
                { name: 'b', type: 'number' },
              ],
            },
          }),
          'form field type must be text, textarea, select, multiselect, checkbox, or date.',
          { field: 'config.fields[1].type' },
        ],
        [
          'form duplicate names',
          formBody({
            config: {
              fields: [
                { name: 'a', type: 'text' },
                { name: ' a', type: 'date' },
              ],
            },
          }),
          'form fields must have unique names.',
          { field: 'config.fields', name: 'a' },
        ],
        [
          'form label',
          formBody({ config: { fields: [{ name: 'a', type: 'text', label: 2 }] } }),
          'config.fields[0].label must be a string.',
          { field: 'config.fields[0].label' },
        ],
        [
          'form required',
          formBody({ config: { fields: [{ name: 'a', type: 'text', required: 'yes' }] } }),
          'form field required must be a boolean.',
          { field: 'config.fields[0].required' },
        ],
        [
          'form select without options',
          formBody({ config: { fields: [{ name: 'a', type: 'select' }] } }),
          'select and multiselect fields require non-empty string options.',
          { field: 'config.fields[0].options' },
        ],
        [
          'form multiselect blank option',
          formBody({ config: { fields: [{ name: 'a', type: 'multiselect', options: ['x', ' '] }] } }),
          'select and multiselect fields require non-empty string options.',
          { field: 'config.fields[0].options' },
        ],
        [
          'form options on text',
          formBody({ config: { fields: [{ name: 'a', type: 'text', options: ['x'] }] } }),
          'options are only supported for select or multiselect fields.',
          { field: 'config.fields[0].options' },
        ],
        [
          'form submitLabel',
          formBody({ config: { fields: [{ name: 'a', type: 'text' }], submitLabel: false } }),
          'config.submitLabel must be a string.',
          { field: 'config.submitLabel' },
        ],
        // A config valid for another type is validated against the given type.
        [
          'form with a choice config',
          { type: 'form', title: 'T', config: choiceBody().config },
          'form config requires at least one field.',
          { field: 'config.fields' },
        ],
        [
          'choice with a form config',
          { type: 'choice', title: 'T', config: formBody().config },
          'choice config requires at least one option.',
          { field: 'config.options' },
        ],
      ];
      for (const [label, body, message, details] of cases) {
        const res = await h.post(chat.id, body);
        expect([label, res.status, res.body?.error]).toEqual([label, 400, ruleError(message, details)]);
      }
      await h.expectUnchanged(chat.id, before);
    },
  );
});

describe('GET /api/v1/chats/{chatId}/requests', () => {
  it('lists pending requests by default, and filters by status, oldest first', async () => {
    const chat = await h.newChat();
    const other = await h.newChat();
    await h.create(other.id, choiceBody());
    const empty = await api.get(`/api/v1/chats/${chat.id}/requests`);
    expect(empty.status).toBe(200);
    expect(empty.body).toStrictEqual({ data: [] });

    const made: any[] = [];
    for (const body of [
      choiceBody({ title: 'r0' }),
      textBody({ title: 'r1' }),
      formBody({ title: 'r2' }),
      choiceBody({ title: 'r3' }),
      textBody({ title: 'r4' }),
    ]) {
      made.push(await h.create(chat.id, body));
      await laterMillisecond();
    }
    expect((await h.resolve(made[1].id, { text: 'Ann' })).status).toBe(200);
    expect((await h.cancel(made[2].id)).status).toBe(200);
    expect((await h.resolve(made[3].id, { selectedOptionIds: ['no'] })).status).toBe(200);

    const byDefault = await api.get(`/api/v1/chats/${chat.id}/requests`);
    expect(Object.keys(byDefault.body)).toEqual(['data']);
    expect(byDefault.body.data.map((r: any) => r.title)).toEqual(['r0', 'r4']);
    expect(byDefault.body.data[0]).toEqual(made[0]);
    expect((await h.list(chat.id, 'pending')).map((r) => r.title)).toEqual(['r0', 'r4']);
    expect((await h.list(chat.id, 'resolved')).map((r) => r.title)).toEqual(['r1', 'r3']);
    expect((await h.list(chat.id, 'cancelled')).map((r) => r.title)).toEqual(['r2']);
    const all = await h.list(chat.id, 'all');
    expect(all.map((r) => r.title)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    for (const r of all) expect(Object.keys(r).sort()).toEqual(REQUEST_KEYS);
    expect(all.map((r) => r.status)).toEqual(['pending', 'resolved', 'cancelled', 'resolved', 'pending']);
  });

  it('orders requests created in a burst by created_at, then id', async () => {
    const chat = await h.newChat();
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) => h.create(chat.id, textBody({ title: `b${i}` }))),
    );
    const expected = [...made]
      .sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1))
      .map((r) => r.id);
    expect((await h.list(chat.id, 'pending')).map((r) => r.id)).toEqual(expected);
  });

  it('rejects an unknown status, and answers 404 for an unknown chat', async () => {
    const chat = await h.newChat();
    for (const status of ['open', 'PENDING', 'any']) {
      expectSchemaError(await api.get(`/api/v1/chats/${chat.id}/requests?status=${status}`), 'status');
    }
    for (const id of [UNKNOWN_ID, 'nope']) {
      const res = await api.get(`/api/v1/chats/${id}/requests?status=all`);
      expect([res.status, res.body.error]).toEqual([
        404,
        { code: 'NOT_FOUND', message: 'Chat not found.', details: { chatId: id } },
      ]);
    }
  });
});

describe('idempotent create (§1.10, §5.5.1)', () => {
  const key = (k: string) => ({ headers: { 'Idempotency-Key': k } });

  it('replays the same key and body: one request, one event, count 1, the same body', async () => {
    const chat = await h.newChat();
    const before = await h.eventCount();
    const first = await h.post(chat.id, choiceBody({ trace: { run: 1 } }), key('req-once'));
    expect(first.status).toBe(201);
    const second = await h.post(chat.id, choiceBody({ trace: { run: 1 } }), key('req-once'));
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    // Key order does not matter to the fingerprint.
    const { config: c, title, type, trace } = choiceBody({ trace: { run: 1 } }) as any;
    const third = await h.post(chat.id, { trace, config: c, title, type }, key('req-once'));
    expect([third.status, third.body]).toEqual([201, first.body]);
    expect(await h.list(chat.id)).toEqual([first.body]);
    expect((await eventsSince(api.tableName, before)).map((e) => e.type)).toEqual(['request.created']);
    expect((await h.getChat(chat.id)).pending_requests_count).toBe(1);
  });

  it('answers 409 for the same key on another chat, creating nothing there', async () => {
    const a = await h.newChat();
    const b = await h.newChat();
    expect((await h.post(a.id, textBody(), key('req-other-chat'))).status).toBe(201);
    const before = await h.snapshot(b.id);
    const total = await h.pendingTotal();
    const res = await h.post(b.id, textBody(), key('req-other-chat'));
    expect([res.status, res.body.error]).toEqual([
      409,
      {
        code: 'CONFLICT',
        message: 'Idempotency-Key already used with a different request payload.',
        details: { field: 'Idempotency-Key', key: 'req-other-chat' },
      },
    ]);
    await h.expectUnchanged(b.id, before);
    expect(before.requests).toEqual([]);
    expect(before.chat.pending_requests_count).toBe(0);
    expect(await h.pendingTotal()).toBe(total);
    expect(await h.list(a.id)).toHaveLength(1);
  });

  it('answers 409 for the same key with a different body on the same chat', async () => {
    const chat = await h.newChat();
    expect((await h.post(chat.id, textBody({ title: 'One' }), key('req-diff'))).status).toBe(201);
    const res = await h.post(chat.id, textBody({ title: 'Two' }), key('req-diff'));
    expect(res.status).toBe(409);
    expect(res.body.error.details).toEqual({ field: 'Idempotency-Key', key: 'req-diff' });
    expect((await h.list(chat.id)).map((r) => r.title)).toEqual(['One']);
  });

  it('releases the key after a failed create, so a retry executes', async () => {
    const chat = await h.newChat();
    const failed = await h.post(chat.id, textBody({ title: ' ' }), key('req-retry'));
    expect(failed.status).toBe(400);
    const retried = await h.post(chat.id, textBody({ title: 'Fixed' }), key('req-retry'));
    expect(retried.status).toBe(201);
    expect((await h.list(chat.id)).map((r) => r.id)).toEqual([retried.body.id]);
  });
});
