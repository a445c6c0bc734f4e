/**
 * Lambda's content filters as the rehearsal applies them (local/rehearse/event-filter.ts): the
 * stack's own patterns on stream records, each operator, arrays, OR'ed filters, and the patterns
 * Lambda would refuse at deployment.
 */
import { describe, expect, it } from '@jest/globals';
import { compileFilters, compilePattern, sqsFilterView } from '../../local/rehearse/event-filter.js';

/** The search writer's filters, as in the synthesized template. */
const SEARCH_WRITER = {
  Filters: [
    {
      Pattern:
        '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"type":{"S":["event"]},"eventType":{"S":["message.created"]},"payload":{"M":{"contentFinal":{"S":[{"exists":true}]}}}}}}',
    },
    {
      Pattern:
        '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"type":{"S":["event"]},"eventType":{"S":["message.streaming.complete"]},"payload":{"M":{"streamState":{"S":["complete"]}}}}}}',
    },
  ],
};

const record = (eventName: string, image: Record<string, unknown>) => ({
  eventName,
  eventSource: 'aws:dynamodb',
  dynamodb: { NewImage: image, SequenceNumber: '1' },
});

describe('the stack filters', () => {
  const matches = compileFilters(SEARCH_WRITER);

  it('keeps a created message with final content, and a completed stream', () => {
    const created = {
      type: { S: 'event' },
      eventType: { S: 'message.created' },
      payload: { M: { contentFinal: { S: 'hi' } } },
    };
    const complete = {
      type: { S: 'event' },
      eventType: { S: 'message.streaming.complete' },
      payload: { M: { streamState: { S: 'complete' } } },
    };
    expect(matches(record('INSERT', created))).toBe(true);
    expect(matches(record('INSERT', complete))).toBe(true);
  });

  it('drops a created message without final content, another event type, and a MODIFY', () => {
    const draft = {
      type: { S: 'event' },
      eventType: { S: 'message.created' },
      payload: { M: { content: { S: 'x' } } },
    };
    const other = {
      type: { S: 'event' },
      eventType: { S: 'chat.updated' },
      payload: { M: { contentFinal: { S: 'x' } } },
    };
    const created = {
      type: { S: 'event' },
      eventType: { S: 'message.created' },
      payload: { M: { contentFinal: { S: 'hi' } } },
    };
    expect(matches(record('INSERT', draft))).toBe(false);
    expect(matches(record('INSERT', other))).toBe(false);
    expect(matches(record('MODIFY', created))).toBe(false);
    expect(matches({ eventName: 'INSERT' })).toBe(false);
  });
});

describe('operators', () => {
  const one = (pattern: object) => compilePattern(JSON.stringify(pattern));

  it('matches literals of each JSON type, one of several alternatives', () => {
    const m = one({ a: ['x', 5, true, null] });
    expect([{ a: 'x' }, { a: 5 }, { a: 5.0 }, { a: true }, { a: null }].map(m)).toEqual([true, true, true, true, true]);
    expect([{ a: 'y' }, { a: '5' }, { a: false }, {}].map(m)).toEqual([false, false, false, false]);
  });

  it('exists true and false', () => {
    expect(one({ a: [{ exists: true }] })({ a: 0 })).toBe(true);
    expect(one({ a: [{ exists: true }] })({ b: 0 })).toBe(false);
    expect(one({ a: [{ exists: false }] })({ b: 0 })).toBe(true);
    expect(one({ a: [{ exists: false }] })({ a: 'here' })).toBe(false);
  });

  it('prefix, suffix, equals-ignore-case and wildcard', () => {
    expect(one({ a: [{ prefix: 'msg_' }] })({ a: 'msg_1' })).toBe(true);
    expect(one({ a: [{ prefix: 'msg_' }] })({ a: 'MSG_1' })).toBe(false);
    expect(one({ a: [{ prefix: { 'equals-ignore-case': 'msg_' } }] })({ a: 'MSG_1' })).toBe(true);
    expect(one({ a: [{ suffix: '.png' }] })({ a: 'x.png' })).toBe(true);
    expect(one({ a: [{ 'equals-ignore-case': 'Hello' }] })({ a: 'hELLO' })).toBe(true);
    expect(one({ a: [{ wildcard: 'chat/*/msg' }] })({ a: 'chat/12/msg' })).toBe(true);
    expect(one({ a: [{ wildcard: 'chat/*/msg' }] })({ a: 'chat/12/msgs' })).toBe(false);
  });

  it('anything-but a value, a list, or a prefix; never a missing field', () => {
    expect(one({ a: [{ 'anything-but': 'x' }] })({ a: 'y' })).toBe(true);
    expect(one({ a: [{ 'anything-but': 'x' }] })({ a: 'x' })).toBe(false);
    expect(one({ a: [{ 'anything-but': 'x' }] })({})).toBe(false);
    expect(one({ a: [{ 'anything-but': ['x', 'y'] }] })({ a: 'y' })).toBe(false);
    expect(one({ a: [{ 'anything-but': { prefix: 'tmp' } }] })({ a: 'tmp1' })).toBe(false);
    expect(one({ a: [{ 'anything-but': { prefix: 'tmp' } }] })({ a: 'keep' })).toBe(true);
  });

  it('numeric ranges, on numbers only', () => {
    const m = one({ n: [{ numeric: ['>', 0, '<=', 5] }] });
    expect([{ n: 0 }, { n: 0.5 }, { n: 5 }, { n: 6 }, { n: '3' }].map(m)).toEqual([false, true, true, false, false]);
    expect(one({ n: [{ numeric: ['=', 3] }] })({ n: 3 })).toBe(true);
  });

  it('an array in the record matches when any element does; nested objects inside arrays too', () => {
    expect(one({ tags: ['b'] })({ tags: ['a', 'b'] })).toBe(true);
    expect(one({ tags: ['c'] })({ tags: ['a', 'b'] })).toBe(false);
    expect(one({ items: { id: ['2'] } })({ items: [{ id: '1' }, { id: '2' }] })).toBe(true);
  });

  it('$or of patterns, and several filters OR-ed', () => {
    expect(one({ $or: [{ a: ['1'] }, { b: ['2'] }] })({ b: '2' })).toBe(true);
    const m = compileFilters({ Filters: [{ Pattern: '{"a":["1"]}' }, { Pattern: '{"b":["2"]}' }] });
    expect([{ a: '1' }, { b: '2' }, { a: '2' }].map(m)).toEqual([true, true, false]);
    expect(compileFilters(undefined)({ anything: 1 })).toBe(true);
  });

  it('filters an SQS body by its JSON fields, a plain body as a string', () => {
    const m = compilePattern('{"body":{"kind":["keep"]}}');
    expect(m(sqsFilterView({ body: '{"kind":"keep"}' }))).toBe(true);
    expect(m(sqsFilterView({ body: 'keep' }))).toBe(false);
    expect(compilePattern('{"body":["keep"]}')(sqsFilterView({ body: 'keep' }))).toBe(true);
  });
});

describe('patterns Lambda refuses', () => {
  it.each([
    ['not JSON', '{"a":'],
    ['a leaf that is not a list', '{"a":"x"}'],
    ['an empty list', '{"a":[]}'],
    ['an unknown operator', '{"a":[{"contains":"x"}]}'],
    ['a numeric without a number', '{"a":[{"numeric":[">","1"]}]}'],
    ['an empty pattern', '{}'],
  ])('%s', (_what, pattern) => {
    expect(() => compilePattern(pattern)).toThrow(/Invalid filter pattern definition/);
  });

  it('more than five filters', () => {
    const Filters = Array.from({ length: 6 }, () => ({ Pattern: '{"a":["1"]}' }));
    expect(() => compileFilters({ Filters })).toThrow(/5 per mapping/);
  });
});
