/**
 * A text_input request's `config.validation.pattern` never stalls the service (issue 33 item 1):
 * the classic catastrophic patterns are resolved against their catastrophic inputs in linear time
 * (functions/platform/text-pattern.ts) while GET /health keeps answering; a pattern the
 * linear-time engine cannot compile (a backreference, a lookaround) is refused at create and at
 * PATCH with the contract's message (§5.5.1); ordinary patterns validate as before (§5.5.4).
 */
import { describe, expect, it } from '@jest/globals';
import { requestsApi, ruleError, textBody } from './support.js';

const { api, h } = requestsApi();

const INVALID = ruleError('config.validation.pattern must be a valid regular expression.', {
  field: 'config.validation.pattern',
});
const MISMATCH = ruleError('text does not match required pattern.', { field: 'text' });

/** Patterns and inputs that take a backtracking engine seconds to forever (the first froze `npm start`). */
const catastrophic: [string, string][] = [
  ['^(a+)+$', `${'a'.repeat(34)}!`],
  ['^([a-zA-Z]+\\s?)*$', 'Alexander Maximilian Johnson1'],
  ['(x+x+)+y', 'x'.repeat(40)],
  ['^(a|aa)+$', `${'a'.repeat(60)}b`],
  ['^(\\w+\\s?)*$', `${'word '.repeat(12)}!`],
  ['^([a-z0-9]+([._-][a-z0-9]+)*)+@x\\.com$', `${'a'.repeat(40)}@`],
];

const textRequest = (pattern: string) =>
  textBody({ title: 'Answer', config: { validation: { pattern, maxLength: 1_000 } } });

/** Milliseconds `fn` takes. */
async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

describe('text_input patterns (issue 33 item 1)', () => {
  it('resolves each catastrophic input in under 50 ms more than an ordinary mismatch, while /health answers', async () => {
    const chat = await h.newChat();
    const ordinary = await h.create(chat.id, textRequest('^\\d+$'));
    const requests = [];
    for (const [pattern] of catastrophic) requests.push(await h.create(chat.id, textRequest(pattern)));

    /**
     * A resolve and a health check in flight together (a stalled event loop would hold both),
     * each timed; the fastest of five tries counts: a stall is in every try, this machine's load
     * (six test runs on two cores) is not.
     */
    const fastest = async (requestId: string, text: string, label: string) => {
      let best = { resolve: Infinity, health: Infinity };
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const [[res, resolveMs], [health, healthMs]] = await Promise.all([
          timed(() => h.resolve(requestId, { text })),
          timed(() => api.get('/api/v1/health')),
        ]);
        expect([label, res.status, res.body.error]).toEqual([label, 400, MISMATCH]);
        expect(health.status).toBe(200);
        best = { resolve: Math.min(best.resolve, resolveMs), health: Math.min(best.health, healthMs) };
      }
      return best;
    };
    // The same 400 on an ordinary pattern: the route's own cost (a read, the envelope), warm.
    const baseline = await fastest(ordinary.id, 'abc', 'ordinary');

    for (const [i, [pattern, text]] of catastrophic.entries()) {
      const best = await fastest(requests[i].id, text, pattern);
      const over = (ms: number, base: number) => (ms - base < 50 ? 'under 50 ms' : `${Math.round(ms - base)} ms more`);
      expect([pattern, over(best.resolve, baseline.resolve), over(best.health, baseline.health)]).toEqual([
        pattern,
        'under 50 ms',
        'under 50 ms',
      ]);
    }
    // Nothing was resolved: every request is still pending.
    expect((await h.list(chat.id, 'pending')).length).toBe(catastrophic.length + 1);
  });

  it.each([
    ['a backreference', '^(\\w)\\1$'],
    ['a named backreference', '^(?<c>\\w)\\k<c>$'],
    ['a lookahead', '^(?=.*\\d).{8,}$'],
    ['a negative lookahead', '^(?!admin$)\\w+$'],
    ['a lookbehind', '(?<=\\$)\\d+'],
    ['a negative lookbehind', '(?<!-)\\d+'],
    ['a repeat count above 1,000', '^a{1001}$'],
  ])('refuses %s at create and at PATCH, changing nothing', async (_label, pattern) => {
    const chat = await h.newChat();
    const before = await h.snapshot(chat.id);
    const created = await h.post(chat.id, textRequest(pattern));
    expect([created.status, created.body.error]).toEqual([400, INVALID]);
    await h.expectUnchanged(chat.id, before);

    const request = await h.create(chat.id, textRequest('^\\d+$'));
    const patched = await h.patch(request.id, { config: { validation: { pattern } } });
    expect([patched.status, patched.body.error]).toEqual([400, INVALID]);
    expect((await h.find(chat.id, request.id)).config).toStrictEqual(request.config);
  });

  it('validates ordinary patterns as before: an unanchored, case-sensitive ECMAScript search', async () => {
    const chat = await h.newChat();
    const cases: [pattern: string, text: string, matches: boolean][] = [
      ['^[A-Z]{3}-\\d{4}$', 'ABC-1234', true],
      ['^[A-Z]{3}-\\d{4}$', 'abc-1234', false],
      ['b+c', 'abbbcd', true],
      ['b+c', 'ABC', false],
      ['^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', 'me@example.org', true],
      ['^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$', 'me@exam ple.org', false],
      // ECMAScript's \s takes a no-break space; RE2's own \s would not.
      ['^\\S+\\s\\S+$', 'Ada\u00a0Lovelace', true],
      // ECMAScript's `.` stops at a line separator; RE2's own `.` would not.
      ['^a.b$', 'a\u2028b', false],
      ['^(?<year>\\d{4})-\\d\\d$', '2026-11', true],
    ];
    for (const [pattern, text, matches] of cases) {
      const request = await h.create(chat.id, textRequest(pattern));
      expect(request.config.validation.pattern).toBe(pattern);
      const res = await h.resolve(request.id, { text });
      if (matches) {
        expect([pattern, text, res.status, res.body.resolution_payload]).toEqual([pattern, text, 200, { text }]);
      } else {
        expect([pattern, text, res.status, res.body.error]).toEqual([pattern, text, 400, MISMATCH]);
      }
    }
    // PATCH takes an ordinary pattern as before.
    const request = await h.create(chat.id, textRequest('^x$'));
    const patched = await h.patch(request.id, { config: { validation: { pattern: '^y+$' } } });
    expect([patched.status, patched.body.config]).toEqual([200, { validation: { pattern: '^y+$' } }]);
  });
});
