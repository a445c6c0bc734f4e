/**
 * Setting a request's deadline (contract §5.5.6): the `deadline` body field of create and PATCH,
 * every rule with its field, the stored shape (`deadline`, `expired_at`), PATCH while pending only,
 * the default checked against the request's (new) config, and a request without a deadline as
 * before. Expiry and reminders are request-expiry.test.ts's.
 */
import { describe, expect, it } from '@jest/globals';
import { eventsSince } from '../../support/events.js';
import { choiceBody, formBody, requestsApi, ruleError, textBody } from './support.js';

const { api, h } = requestsApi();

const HOUR = 3600;
const DAYS_30 = 30 * 24 * HOUR;

type Case = [label: string, deadline: unknown, message: string, details: Record<string, unknown>];

/** Every case is its 400 on create, and nothing is created. */
async function expectCreateErrors(body: (deadline: unknown) => unknown, cases: Case[]) {
  const chat = await h.newChat();
  const before = await h.snapshot(chat.id);
  for (const [label, deadline, message, details] of cases) {
    const res = await h.post(chat.id, body(deadline));
    expect([label, res.status, res.body?.error]).toEqual([label, 400, ruleError(message, details)]);
  }
  await h.expectUnchanged(chat.id, before);
}

describe('the deadline field on create (§5.5.6)', () => {
  it('stores `inSeconds` as an absolute time, cancel by default, reminders largest first', async () => {
    const chat = await h.newChat();
    const before = Date.now();
    const request = await h.create(
      chat.id,
      choiceBody({ deadline: { inSeconds: 600, remindBeforeSeconds: [60, 300] } }),
    );
    const after = Date.now();
    expect(request.expired_at).toBeNull();
    expect(request.deadline).toEqual({
      at: expect.any(String),
      on_expiry: 'cancel',
      default_payload: null,
      remind_before_seconds: [300, 60],
    });
    const at = Date.parse(request.deadline.at);
    expect(at).toBeGreaterThanOrEqual(before + 600_000);
    expect(at).toBeLessThanOrEqual(after + 600_000);
    expect(request.deadline.at).toBe(new Date(at).toISOString());
    // As stored: the chat's list reads it back the same.
    expect(await h.find(chat.id, request.id)).toEqual(request);
  });

  it('takes `at` with any offset and answers it in UTC; a resolve default normalized as resolve would', async () => {
    const chat = await h.newChat();
    const at = new Date(Date.now() + 2 * HOUR * 1000);
    const withOffset = new Date(at.getTime() + 2 * HOUR * 1000).toISOString().replace('Z', '+02:00');
    const request = await h.create(
      chat.id,
      textBody({ deadline: { at: withOffset, onExpiry: 'resolve', default: { text: '  Ada  ', other: 1 } } }),
    );
    expect(request.deadline).toEqual({
      at: new Date(Date.parse(withOffset)).toISOString(),
      on_expiry: 'resolve',
      default_payload: { text: 'Ada' },
      remind_before_seconds: [],
    });
    const form = await h.create(
      chat.id,
      formBody({
        deadline: { inSeconds: 60, onExpiry: 'resolve', default: { values: { email: 'a@b.c', agree: false } } },
      }),
    );
    expect(form.deadline.default_payload).toEqual({ values: { email: 'a@b.c', agree: false } });
  });

  it('`null` or no deadline: `deadline: null`, and the create is as before', async () => {
    const chat = await h.newChat();
    const events = await h.eventCount();
    const plain = await h.create(chat.id, choiceBody());
    const nulled = await h.create(chat.id, choiceBody({ deadline: null }));
    for (const r of [plain, nulled]) expect([r.deadline, r.expired_at]).toEqual([null, null]);
    // One request.created each, and nothing else.
    expect((await eventsSince(api.tableName, events)).map((e) => e.type)).toEqual([
      'request.created',
      'request.created',
    ]);
  });

  it('refuses every rule with its field, creating nothing', async () => {
    const soon = (s: number) => new Date(Date.now() + s * 1000).toISOString();
    await expectCreateErrors(
      (deadline) => choiceBody({ deadline }),
      [
        ['a string', 'tomorrow', 'deadline must be a JSON object or null.', { field: 'deadline' }],
        ['an array', [], 'deadline must be a JSON object or null.', { field: 'deadline' }],
        ['neither', {}, 'deadline requires exactly one of at and inSeconds.', { field: 'deadline' }],
        [
          'both',
          { at: soon(600), inSeconds: 600 },
          'deadline requires exactly one of at and inSeconds.',
          { field: 'deadline' },
        ],
        [
          'inSeconds too small',
          { inSeconds: 9 },
          'deadline.inSeconds must be an integer from 10 to 2592000.',
          { field: 'deadline.inSeconds' },
        ],
        [
          'inSeconds too large',
          { inSeconds: DAYS_30 + 1 },
          'deadline.inSeconds must be an integer from 10 to 2592000.',
          { field: 'deadline.inSeconds' },
        ],
        [
          'inSeconds not an integer',
          { inSeconds: 60.5 },
          'deadline.inSeconds must be an integer from 10 to 2592000.',
          { field: 'deadline.inSeconds' },
        ],
        [
          'inSeconds a string',
          { inSeconds: '60' },
          'deadline.inSeconds must be an integer from 10 to 2592000.',
          { field: 'deadline.inSeconds' },
        ],
        [
          'at without an offset',
          { at: soon(600).replace('Z', '') },
          'deadline.at must be an ISO 8601 timestamp with a time zone offset.',
          { field: 'deadline.at' },
        ],
        [
          'at not a date',
          { at: '2026-13-45T99:00:00Z' },
          'deadline.at must be an ISO 8601 timestamp with a time zone offset.',
          { field: 'deadline.at' },
        ],
        [
          'at a number',
          { at: Date.now() + 600_000 },
          'deadline.at must be an ISO 8601 timestamp with a time zone offset.',
          { field: 'deadline.at' },
        ],
        [
          'at too soon',
          { at: soon(5) },
          'deadline.at must be between 10 seconds and 30 days from now.',
          { field: 'deadline.at' },
        ],
        [
          'at in the past',
          { at: soon(-60) },
          'deadline.at must be between 10 seconds and 30 days from now.',
          { field: 'deadline.at' },
        ],
        [
          'at too far',
          { at: soon(DAYS_30 + 60) },
          'deadline.at must be between 10 seconds and 30 days from now.',
          { field: 'deadline.at' },
        ],
        [
          'onExpiry unknown',
          { inSeconds: 60, onExpiry: 'approve' },
          'deadline.onExpiry must be one of cancel, resolve.',
          { field: 'deadline.onExpiry' },
        ],
        [
          'resolve without default',
          { inSeconds: 60, onExpiry: 'resolve' },
          'deadline.default is required when deadline.onExpiry is resolve.',
          { field: 'deadline.default' },
        ],
        [
          'default not an object',
          { inSeconds: 60, onExpiry: 'resolve', default: ['yes'] },
          'deadline.default must be a JSON object.',
          { field: 'deadline.default' },
        ],
        [
          'default with cancel',
          { inSeconds: 60, default: { selectedOptionIds: ['yes'] } },
          'deadline.default is only allowed when deadline.onExpiry is resolve.',
          { field: 'deadline.default' },
        ],
        [
          'default of an unknown option',
          { inSeconds: 60, onExpiry: 'resolve', default: { selectedOptionIds: ['maybe'] } },
          'selectedOptionIds contains unknown option.',
          { field: 'deadline.default.selectedOptionIds', optionId: 'maybe' },
        ],
        [
          'default over maxSelections',
          { inSeconds: 60, onExpiry: 'resolve', default: { selectedOptionIds: ['yes', 'no'] } },
          'selectedOptionIds exceeds maximum selections.',
          { field: 'deadline.default.selectedOptionIds', maxSelections: 1 },
        ],
        [
          'reminders not an array',
          { inSeconds: 600, remindBeforeSeconds: 60 },
          'deadline.remindBeforeSeconds must be an array of at most 3 integers.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
        [
          'four reminders',
          { inSeconds: 600, remindBeforeSeconds: [1, 2, 3, 4] },
          'deadline.remindBeforeSeconds must be an array of at most 3 integers.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
        [
          'a reminder of 0',
          { inSeconds: 600, remindBeforeSeconds: [0] },
          'deadline.remindBeforeSeconds entries must be integers of at least 1 and less than the time left to the deadline.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
        [
          'a reminder as long as the time left',
          { inSeconds: 600, remindBeforeSeconds: [600] },
          'deadline.remindBeforeSeconds entries must be integers of at least 1 and less than the time left to the deadline.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
        [
          'a fractional reminder',
          { inSeconds: 600, remindBeforeSeconds: [1.5] },
          'deadline.remindBeforeSeconds entries must be integers of at least 1 and less than the time left to the deadline.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
        [
          'repeated reminders',
          { inSeconds: 600, remindBeforeSeconds: [60, 60] },
          'deadline.remindBeforeSeconds entries must be distinct.',
          { field: 'deadline.remindBeforeSeconds' },
        ],
      ],
    );
  });

  it("reports a form default's errors under deadline.default.values…", async () => {
    await expectCreateErrors(
      (deadline) => formBody({ deadline }),
      [
        [
          'missing required',
          { inSeconds: 60, onExpiry: 'resolve', default: { values: { agree: true } } },
          'missing required form value.',
          { field: 'deadline.default.values.email' },
        ],
        [
          'unknown select option',
          { inSeconds: 60, onExpiry: 'resolve', default: { values: { email: 'a', agree: true, color: 'blue' } } },
          'select value must match one of the configured options.',
          { field: 'deadline.default.values.color' },
        ],
      ],
    );
  });

  it('checks the deadline after the other rules and after the chat (404 first)', async () => {
    const chat = await h.newChat();
    const bad = { inSeconds: 1 };
    const res = await h.post(chat.id, choiceBody({ title: '  ', deadline: bad }));
    expect(res.body.error).toEqual(ruleError('title cannot be empty.', { field: 'title' }));
    const missing = await h.post('no-such-chat', choiceBody({ deadline: bad }));
    expect(missing.status).toBe(404);
  });
});

describe('the deadline field on PATCH (§5.5.6)', () => {
  it('sets, changes and removes a deadline of a pending request; no event, no chat change', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const chatBefore = await h.getChat(chat.id);
    const events = await h.eventCount();

    const set = await h.patch(request.id, { deadline: { inSeconds: 120, remindBeforeSeconds: [30] } });
    expect(set.status).toBe(200);
    expect(set.body.deadline).toMatchObject({ on_expiry: 'cancel', remind_before_seconds: [30] });
    expect(set.body.status).toBe('pending');

    const changed = await h.patch(request.id, {
      deadline: { inSeconds: 300, onExpiry: 'resolve', default: { selectedOptionIds: ['no'] } },
    });
    expect(changed.body.deadline).toMatchObject({
      on_expiry: 'resolve',
      default_payload: { selectedOptionIds: ['no'] },
      remind_before_seconds: [],
    });
    expect(Date.parse(changed.body.deadline.at)).toBeGreaterThan(Date.parse(set.body.deadline.at));

    const removed = await h.patch(request.id, { deadline: null });
    expect(removed.body.deadline).toBeNull();
    expect(await h.find(chat.id, request.id)).toEqual(removed.body);
    // §5.5.3: a PATCH emits nothing and leaves the chat alone.
    expect(await eventsSince(api.tableName, events)).toEqual([]);
    expect(await h.getChat(chat.id)).toEqual(chatBefore);
  });

  it('a deadline alone is an update; other fields leave the deadline as it is', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600 } }));
    const retitled = await h.patch(request.id, { title: 'Approve now?' });
    expect(retitled.status).toBe(200);
    expect(retitled.body.deadline).toEqual(request.deadline);
  });

  it('refuses a deadline on a closed request (even null), changing nothing', async () => {
    const chat = await h.newChat();
    const resolved = await h.create(chat.id, choiceBody({ deadline: { inSeconds: 600 } }));
    expect((await h.resolve(resolved.id, { selectedOptionIds: ['yes'] })).status).toBe(200);
    const cancelled = await h.create(chat.id, choiceBody());
    expect((await h.cancel(cancelled.id)).status).toBe(200);
    for (const [r, status] of [
      [resolved, 'resolved'],
      [cancelled, 'cancelled'],
    ] as const) {
      const before = await h.find(chat.id, r.id);
      for (const deadline of [{ inSeconds: 60 }, null]) {
        const res = await h.patch(r.id, { deadline, title: 'changed' });
        expect([res.status, res.body.error]).toEqual([
          400,
          ruleError('Only pending requests can take a deadline.', { requestId: r.id, status }),
        ]);
      }
      expect(await h.find(chat.id, r.id)).toEqual(before);
    }
    // Other fields still update a closed request (§5.5.3).
    expect((await h.patch(cancelled.id, { title: 'Renamed' })).body.title).toBe('Renamed');
  });

  it("checks a default against the PATCH's new config, and a new config against the stored default", async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const newConfig = {
      options: [
        { id: 'hold', label: 'Hold' },
        { id: 'go', label: 'Go' },
      ],
    };
    // The old config has no `hold`; the new one has.
    const res = await h.patch(request.id, {
      config: newConfig,
      deadline: { inSeconds: 600, onExpiry: 'resolve', default: { selectedOptionIds: ['hold'] } },
    });
    expect(res.status).toBe(200);
    expect(res.body.deadline.default_payload).toEqual({ selectedOptionIds: ['hold'] });
    // A config that drops the default's option is refused while the default stands.
    const before = await h.find(chat.id, request.id);
    const dropping = await h.patch(request.id, { config: { options: [{ id: 'go', label: 'Go' }] } });
    expect([dropping.status, dropping.body.error]).toEqual([
      400,
      ruleError('selectedOptionIds contains unknown option.', {
        field: 'deadline.default.selectedOptionIds',
        optionId: 'hold',
      }),
    ]);
    expect(await h.find(chat.id, request.id)).toEqual(before);
  });

  it('an empty PATCH is still refused, and a bad deadline names its field', async () => {
    const chat = await h.newChat();
    const request = await h.create(chat.id, choiceBody());
    const empty = await h.patch(request.id, {});
    expect(empty.body.error).toEqual(ruleError('At least one updatable field is required.', null));
    const bad = await h.patch(request.id, { deadline: { inSeconds: 600, onExpiry: 'resolve' } });
    expect(bad.body.error).toEqual(
      ruleError('deadline.default is required when deadline.onExpiry is resolve.', { field: 'deadline.default' }),
    );
  });
});
