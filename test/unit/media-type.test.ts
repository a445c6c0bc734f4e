/**
 * One media type (contract §8.1 [Divergence]; issue 33 item 2): what `normalizeMediaType`
 * takes (one `type/subtype` with parameters) and makes of it (lower case, `charset` for text
 * only), what it refuses (lists, stray text, a parameter without a value), in linear time; and
 * what a download is served as (`servedAs`): the normalized type, inline for images a browser
 * shows, audio and video only, and an unreadable stored type as an octet-stream attachment.
 */
import { describe, expect, it } from '@jest/globals';
import { normalizeMediaType, servedAs } from '../../functions/core/media.js';

describe('normalizeMediaType', () => {
  it.each([
    ['audio/mpeg', 'audio/mpeg'],
    ['Audio/MPEG; rate=44100', 'audio/mpeg'],
    ['text/plain;charset=UTF-8', 'text/plain; charset=utf-8'],
    ['Text/HTML; Format=flowed; Charset="utf-8"', 'text/html; charset=utf-8'],
    ['text/plain; charset="a b"', 'text/plain'],
    ['text/plain; a="; charset=evil"', 'text/plain'],
    ['application/json; charset=utf-8', 'application/json'],
    ['text/plain;', 'text/plain'],
    ['text/plain;;charset=ascii', 'text/plain; charset=ascii'],
    [' image/png ', 'image/png'],
    ['application/vnd.example+json', 'application/vnd.example+json'],
  ])('%j → %j', (declared, normalized) => expect(normalizeMediaType(declared)).toBe(normalized));

  it.each([
    'audio/mpeg;,text/html',
    'text/html, image/png',
    'audio/mpeg,text/html',
    'audio/mpeg; x',
    'audio/mpeg; x=',
    'audio/ mpeg',
    'image/png text/html',
    'text',
    '*/ *',
    'x y',
    'text/plain\u0000',
    'text/\ud800',
    'text/plain; charset="unterminated',
    '',
  ])('%j is not one media type', (declared) => expect(normalizeMediaType(declared)).toBeUndefined());

  it('refuses in linear time (no backtracking over the ways to split whitespace)', () => {
    const inputs = [`a/b${' ; '.repeat(80)}x`, `a/b${';'.repeat(250)} x`, `text/plain; a="${'\\"'.repeat(120)}`];
    for (const input of inputs) {
      const started = performance.now();
      expect(normalizeMediaType(input)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(50);
    }
  });
});

describe('servedAs', () => {
  it.each([
    ['image/png', 'image/png', 'inline'],
    ['IMAGE/JPEG; q=1', 'image/jpeg', 'inline'],
    ['audio/webm;codecs=opus', 'audio/webm', 'inline'],
    ['video/mp4', 'video/mp4', 'inline'],
    ['image/svg+xml', 'image/svg+xml', 'attachment'],
    ['application/pdf', 'application/pdf', 'attachment'],
    ['text/html; charset=utf-8', 'text/html; charset=utf-8', 'attachment'],
    ['image/x-icon', 'image/x-icon', 'attachment'],
    ['audio/mpeg;,text/html', 'application/octet-stream', 'attachment'],
  ])('%j is served as %j, %s', (stored, type, disposition) =>
    expect(servedAs(stored, 'a "b".bin')).toEqual({
      contentType: type,
      contentDisposition: `${disposition}; filename="a__b_.bin"`,
    }),
  );
});
