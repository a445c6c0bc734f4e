/**
 * PATCH /api/v1/requests/{requestId} (contract §5.5.3, §4.3 Update): title, body, config and
 * trace in every status, config re-validated against the existing type, no event, no chat
 * change (§3.6), and the effect of an update on a later resolution. A PATCH racing a resolve or
 * a removal between its read and its write: update-races.test.ts (sources only).
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince } from '../../support/events.js';
import { REQUEST_KEYS, UNKNOWN_ID } from '../../support/shapes.js';
import {
  choiceBody,
  expectRequestNotFound,
  expectSchemaError,
  formBody,
  requestsApi,
  ruleError,
  textBody,
} from './support.js';
import { laterMillisecond } from '../../support/wait.js';

const { api, h } = requestsApi();

async function patched(requestId: string, body: unknown): Promise<any> {
  const res = await h.patch(requestId, body);
  expect([res.status, res.body?.error]).toEqual([200, undefined]);
  expect(Object.keys(res.body).sort()).toEqual(REQUEST_KEYS);
  return res.body;
}

describe('PATCH /api/v1/requests/{requestId}: each updatable field', () => {
  it('trims the title and changes nothing else', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ body: 'b', trace: { t: 1 } }));
    const out = await patched(request.id, { title: '  Ship it now?  ' });
    expect(out).toEqual({ ...request, title: 'Ship it now?' });
    expect(await h.find(chat.id, request.id)).toEqual(out);
  });

  it('replaces the body with a string, and clears it with null', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, textBody({ body: 'first' }));
    const replaced = await patched(request.id, { body: '  second  ' });
    expect(replaced).toEqual({ ...request, body: '  second  ' });
    const cleared = await patched(request.id, { body: null });
    expect(cleared).toEqual({ ...request, body: null });
    expect(await h.find(chat.id, request.id)).toEqual(cleared);
  });

  it('re-validates and normalizes the config against the existing type', async () => {
    const chat = await h.newChat();
    const choice = await h.create(chat.id, choiceBody());
    const c = await patched(choice.id, {
      config: {
        options: [
          { id: ' c ', label: ' C ', variant: 'danger', x: 1 },
          { id: 'd', label: 'D', variant: null },
        ],
        maxSelections: 2,
        extra: 1,
      },
    });
    expect(c).toEqual({
      ...choice,
      config: {
        options: [
          { id: 'c', label: 'C', variant: 'danger' },
          { id: 'd', label: 'D' },
        ],
        maxSelections: 2,
        minSelections: 0,
      },
    });

    const text = await h.create(chat.id, textBody());
    const t = await patched(text.id, { config: {} });
    expect(t).toEqual({ ...text, config: {} });
    const t2 = await patched(text.id, { config: { validation: { pattern: null, minLength: null }, placeholder: 'P' } });
    expect(t2.config).toStrictEqual({ placeholder: 'P', validation: { pattern: null } });

    const form = await h.create(chat.id, formBody());
    const f = await patched(form.id, {
      config: { fields: [{ name: ' n ', type: 'multiselect', options: [' a ', 'b'], required: true }] },
    });
    expect(f).toEqual({
      ...form,
      config: { fields: [{ name: 'n', type: 'multiselect', options: ['a', 'b'], required: true }] },
    });
    expect((await h.list(chat.id)).map((r) => r.config)).toEqual([c.config, t2.config, f.config]);
  });

  it('replaces the trace as a whole (no merge)', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, formBody({ trace: { a: 1, keep: true } }));
    const out = await patched(request.id, { trace: { b: 2 } });
    expect(out).toEqual({ ...request, trace: { b: 2 } });
    const untraced = await h.create(chat.id, formBody());
    expect((await patched(untraced.id, { trace: { now: 'set' } })).trace).toEqual({ now: 'set' });
    expect((await patched(untraced.id, { trace: {} })).trace).toEqual({});
  });

  it('updates several fields at once, ignores type, status and other keys', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const out = await patched(request.id, {
      title: 'All',
      body: 'B',
      config: { options: [{ id: 'z', label: 'Z' }] },
      trace: { x: 1 },
      type: 'form',
      status: 'resolved',
      resolved_by: 'backend',
      id: 'other',
    });
    expect(out).toEqual({
      ...request,
      title: 'All',
      body: 'B',
      config: { options: [{ id: 'z', label: 'Z' }], maxSelections: 1, minSelections: 0 },
      trace: { x: 1 },
    });
    expect(out).toMatchObject({ type: 'choice', status: 'pending', resolved_by: null });
  });
});

describe('PATCH in every status', () => {
  it('updates a resolved request without touching its status or resolution', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ trace: { v: 1 } }));
    const res = await h.resolve(request.id, { selectedOptionIds: ['no'], resolvedBy: 'backend' });
    expect(res.status).toBe(200);
    const resolved = res.body;
    const out = await patched(resolved.id, {
      title: ' Later title ',
      body: null,
      config: { options: [{ id: 'only', label: 'Only' }] },
      trace: { v: 2 },
    });
    expect(out).toEqual({
      ...resolved,
      title: 'Later title',
      body: null,
      config: { options: [{ id: 'only', label: 'Only' }], maxSelections: 1, minSelections: 0 },
      trace: { v: 2 },
    });
    expect(out).toMatchObject({
      status: 'resolved',
      resolved_by: 'backend',
      resolution_payload: { selectedOptionIds: ['no'] },
    });
    expect(out.resolved_at).toBe(resolved.resolved_at);
    expect(await h.list(chat.id, 'resolved')).toEqual([out]);
  });

  it('updates a cancelled request without touching its status', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, textBody());
    expect((await h.cancel(request.id)).status).toBe(200);
    const out = await patched(request.id, {
      title: 'After cancel',
      config: { placeholder: 'p' },
      trace: { c: 1 },
      body: 'b',
    });
    expect(out).toEqual({
      ...request,
      status: 'cancelled',
      title: 'After cancel',
      config: { placeholder: 'p' },
      trace: { c: 1 },
      body: 'b',
    });
    expect(out).toMatchObject({ resolved_at: null, resolved_by: null, resolution_payload: null });
    expect(await h.list(chat.id, 'cancelled')).toEqual([out]);
  });
});

describe('PATCH has no effect beyond the request', () => {
  it('emits no event, leaves the chat (updated_at, pending count) alone and writes no dispatch input', async () => {
    const chat = await h.newChat();
    const pending = await h.create(chat.id, choiceBody());
    const resolved = await h.create(chat.id, textBody());
    expect((await h.resolve(resolved.id, { text: 'Ann' })).status).toBe(200);
    const cancelled = await h.create(chat.id, formBody());
    expect((await h.cancel(cancelled.id)).status).toBe(200);
    const chatBefore = await h.getChat(chat.id);
    const inputs = await h.dispatchInputs(chat.id);
    const events = await h.eventCount();
    const total = await h.pendingTotal();
    await laterMillisecond();
    await patched(pending.id, { title: 'p2', trace: { a: 1 } });
    await patched(resolved.id, { body: 'r2', config: { validation: { maxLength: 3 } } });
    await patched(cancelled.id, { title: 'c2', config: { fields: [{ name: 'x', type: 'date' }] } });
    expect(await h.getChat(chat.id)).toEqual(chatBefore);
    expect(chatBefore.pending_requests_count).toBe(1);
    expect(await eventsSince(api.tableName, events)).toEqual([]);
    expect(await h.dispatchInputs(chat.id)).toEqual(inputs);
    expect(await h.pendingTotal()).toBe(total);
  });
});

describe('PATCH errors', () => {
  it('answers 400 with details null when no updatable field is present, changing nothing', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const before = await h.snapshot(chat.id);
    const expected = ruleError('At least one updatable field is required.', null);
    for (const body of [
      {},
      { type: 'form' },
      { status: 'cancelled', resolvedBy: 'user', selectedOptionIds: ['yes'] },
      undefined,
    ]) {
      const res = await h.patch(request.id, body);
      expect([JSON.stringify(body) ?? 'no body', res.status, res.body?.error]).toEqual([
        JSON.stringify(body) ?? 'no body',
        400,
        expected,
      ]);
      expect(res.body.error).toHaveProperty('details', null);
    }
    await h.expectUnchanged(chat.id, before);
  });

  it('answers 404 Request not found for an unknown request', async () => {
    for (const id of [UNKNOWN_ID, 'not-a-request']) {
      const res = await h.patch(id, { title: 'x' });
      expectRequestNotFound(res, id);
    }
  });

  it('answers the §5.5.1 rule errors, with config checked against the existing type, changing nothing', async () => {
    const chat = await h.newChat();
    const choice = await h.create(chat.id, choiceBody());
    const text = await h.create(chat.id, textBody());
    const form = await h.create(chat.id, formBody());
    const before = await h.snapshot(chat.id);
    const option = (id: string, label: string) => ({ id, label });
    const textField = (name: string) => ({ name, type: 'text' });
    const cases: [label: string, id: string, body: unknown, message: string, details: Record<string, unknown>][] = [
      ['title blank', choice.id, { title: '   ' }, 'title cannot be empty.', { field: 'title' }],
      ['title number', choice.id, { title: 5 }, 'title must be a string.', { field: 'title' }],
      ['title null', text.id, { title: null }, 'title must be a string.', { field: 'title' }],
      ['body number', text.id, { body: 1 }, 'body must be a string or null.', { field: 'body' }],
      ['trace array', form.id, { trace: ['x'] }, 'trace must be a JSON object.', { field: 'trace' }],
      ['trace string', form.id, { trace: 'x' }, 'trace must be a JSON object.', { field: 'trace' }],
      ['config not object', choice.id, { config: 'x' }, 'config must be a JSON object.', { field: 'config' }],
      ['config null', text.id, { config: null }, 'config must be a JSON object.', { field: 'config' }],
      [
        'choice given a text config',
        choice.id,
        { config: { placeholder: 'x' } },
        'choice config requires at least one option.',
        { field: 'config.options' },
      ],
      [
        'choice duplicate ids',
        choice.id,
        { config: { options: [option('a', 'A'), option('a', 'B')] } },
        'choice options must have unique ids.',
        { field: 'config.options', optionId: 'a' },
      ],
      [
        'text given bad lengths',
        text.id,
        { config: { validation: { maxLength: 0 } } },
        'config.validation.maxLength must be an integer >= 1.',
        { field: 'config.validation.maxLength' },
      ],
      [
        'text bad pattern',
        text.id,
        { config: { validation: { pattern: '[' } } },
        'config.validation.pattern must be a valid regular expression.',
        { field: 'config.validation.pattern' },
      ],
      [
        'form given a choice config',
        form.id,
        { config: choiceBody().config },
        'form config requires at least one field.',
        { field: 'config.fields' },
      ],
      [
        'form duplicate names',
        form.id,
        { config: { fields: [textField('n'), textField('n')] } },
        'form fields must have unique names.',
        { field: 'config.fields', name: 'n' },
      ],
      // A valid title does not save an invalid config: nothing is applied.
      [
        'valid title, invalid config',
        choice.id,
        { title: 'Fine', config: { options: [] } },
        'choice config requires at least one option.',
        { field: 'config.options' },
      ],
    ];
    for (const [label, id, body, message, details] of cases) {
      const res = await h.patch(id, body);
      expect([label, res.status, res.body?.error]).toEqual([label, 400, ruleError(message, details)]);
    }
    expectSchemaError(await h.patch(choice.id, { trace: null }), 'trace');
    expectSchemaError(await h.patch(choice.id, { title: 'Fine', trace: null }), 'trace');
    await h.expectUnchanged(chat.id, before);
  });
});

describe('an update seen by a later resolution', () => {
  it('validates the resolution against the updated config, and reports the updated title and trace', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ trace: { old: true } }));
    await patched(request.id, {
      title: ' Renamed ',
      trace: { fresh: 1 },
      config: {
        options: [
          { id: 'c', label: 'C' },
          { id: 'd', label: 'D' },
        ],
        maxSelections: 2,
      },
    });
    const stale = await h.resolve(request.id, { selectedOptionIds: ['yes'] });
    expect([stale.status, stale.body.error]).toEqual([
      400,
      ruleError('selectedOptionIds contains unknown option.', { field: 'selectedOptionIds', optionId: 'yes' }),
    ]);
    const before = await h.eventCount();
    const ok = await h.resolve(request.id, { selectedOptionIds: ['d', 'c'] });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      title: 'Renamed',
      trace: { fresh: 1 },
      resolution_payload: { selectedOptionIds: ['d', 'c'] },
    });
    const events = await eventsSince(api.tableName, before);
    expect(events.map((e) => e.type)).toEqual(['request.resolved']);
    expect(events[0]!.payload).toMatchObject({ title: 'Renamed', trace: { fresh: 1 } });
    const inputs = await h.dispatchInputs(chat.id);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      request_title: 'Renamed',
      resolution_payload: { selectedOptionIds: ['d', 'c'] },
    });
  });
});
