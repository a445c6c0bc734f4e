/**
 * Push payload construction (contract §7.4, §7.3 body sources, §5.10.3 test defaults): body
 * normalization at 240 UTF-16 code units, the 4,000-byte cap by 16-character steps, giving up,
 * and the data object's shape.
 */
import { describe, expect, it } from '@jest/globals';
import { buildPushPayload, messageBodySource, testPushInput } from '../../functions/core/push-payload.js';
import type { PushData } from '../../functions/core/push-payload.js';

const data: PushData = { chatId: 'c1', messageId: 'm1', type: 'message', url: '/chats/c1' };
const bodyOf = (payload: string | undefined) => (JSON.parse(payload!) as { body: string }).body;
const bytes = (payload: string | undefined) => Buffer.byteLength(payload!, 'utf8');

describe('body normalization (§7.4 step 1)', () => {
  it('trims, and falls back when empty', () => {
    expect(bodyOf(buildPushPayload('T', '  hi \n', data))).toBe('hi');
    expect(bodyOf(buildPushPayload('T', '   ', data))).toBe('Open chat to view the latest update.');
    expect(bodyOf(buildPushPayload('T', null, data))).toBe('Open chat to view the latest update.');
  });

  it('keeps exactly 240 characters; cuts 241 to 239, trims the cut, adds the ellipsis', () => {
    expect(bodyOf(buildPushPayload('T', 'a'.repeat(240), data))).toBe('a'.repeat(240));
    expect(bodyOf(buildPushPayload('T', 'a'.repeat(241), data))).toBe(`${'a'.repeat(239)}…`);
    const spaced = `${'a'.repeat(236)}   ${'b'.repeat(10)}`;
    expect(bodyOf(buildPushPayload('T', spaced, data))).toBe(`${'a'.repeat(236)}…`);
  });

  it('counts UTF-16 code units (an emoji is two)', () => {
    const body = bodyOf(buildPushPayload('T', '😀'.repeat(130), data));
    expect(body.length).toBeLessThanOrEqual(240);
    expect(body.endsWith('…')).toBe(true);
    expect(body.slice(0, -1)).toBe('😀'.repeat(130).slice(0, 239));
  });
});

describe('the 4,000-byte cap (§7.4 steps 2 and 3)', () => {
  it('leaves a payload that fits alone, and keeps the data keys in order without an absent messageId', () => {
    const payload = buildPushPayload('Ada', 'Hello', { chatId: 'c', type: 'request', url: '/chats/c' });
    expect(payload).toBe('{"title":"Ada","body":"Hello","data":{"chatId":"c","type":"request","url":"/chats/c"}}');
  });

  it('shortens the body 16 characters at a time, keeping the longest that fits', () => {
    const title = 'T'.repeat(3_600);
    const payload = buildPushPayload(title, 'é'.repeat(300), data);
    expect(bytes(payload)).toBeLessThanOrEqual(4000);
    const body = bodyOf(payload);
    const kept = body.length - 1;
    expect(body).toBe(`${'é'.repeat(kept)}…`);
    // 239 → 224 → 209 …: each step drops 16 characters, the ellipsis among them, and re-adds it.
    expect((239 - kept) % 15).toBe(0);
    const oneStepLonger = JSON.stringify({ title, body: `${'é'.repeat(kept + 15)}…`, data });
    expect(Buffer.byteLength(oneStepLonger)).toBeGreaterThan(4000);
  });

  it('ends at an empty body when only that fits, and gives up when nothing does', () => {
    const almost = 'T'.repeat(4000 - bytes(buildPushPayload('', '', data)) - 2);
    const payload = buildPushPayload(almost, 'some words here', data);
    expect(payload).toBeDefined();
    expect(bytes(payload)).toBeLessThanOrEqual(4000);
    expect(buildPushPayload('T'.repeat(4_000), 'x', data)).toBeUndefined();
  });
});

describe('body sources (§7.3)', () => {
  it('a message created complete: its content, or "New message received." for media only', () => {
    expect(messageBodySource('  full text  ', false)).toBe('  full text  ');
    expect(messageBodySource(null, false)).toBe('New message received.');
  });

  it('a completed stream: trimmed and cut to 180, or the fallback when blank', () => {
    expect(messageBodySource(` ${'x'.repeat(200)} `, true)).toBe('x'.repeat(180));
    expect(messageBodySource('   ', true)).toBe('New message received.');
    expect(messageBodySource(null, true)).toBe('New message received.');
  });
});

describe('POST /push/test input (§5.10.3)', () => {
  it('fills defaults for missing or blank fields', () => {
    expect(testPushInput({ title: ' ', body: '' })).toEqual({
      title: 'OpenGram',
      body: 'This is a test push notification.',
      data: { chatId: 'test', type: 'test', url: '/chats/test' },
    });
  });

  it.each([
    ['/chats/c1?x=1#m', '/chats/c1?x=1#m'],
    ['inbox', '/inbox'],
    ['https://relay.invalid/chats/c1', '/chats/c1'],
    ['https://evil.example/x', '/chats/c9'],
    ['//evil.example/x', '/chats/c9'],
    ['/\\evil.example/x', '/chats/c9'],
    ['javascript:alert(1)', '/chats/c9'],
    ['   ', '/chats/c9'],
  ])('url %j → %s', (url, expected) => {
    expect(testPushInput({ chatId: 'c9', url }).data.url).toBe(expected);
  });
});
