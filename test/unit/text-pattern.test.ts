/**
 * functions/platform/text-pattern.ts, the one rule the service and the web app match a
 * text_input request's pattern with (issue 33 item 1): linear time on the classic catastrophic
 * inputs, ECMAScript's meaning kept for ordinary patterns, and what RE2 cannot do refused.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  PATTERN_MAX_INSTRUCTIONS,
  compileTextPattern,
  patternProblem,
  textMatchesPattern,
} from '../../functions/platform/text-pattern.js';

/** Patterns, each with the catastrophic input a backtracking engine takes seconds or more on. */
const catastrophic: [string, string][] = [
  ['^(a+)+$', `${'a'.repeat(34)}!`],
  ['^([a-zA-Z]+\\s?)*$', 'Alexander Maximilian Johnson1'],
  ['(x+x+)+y', 'x'.repeat(40)],
  ['^(a|aa)+$', `${'a'.repeat(60)}b`],
  ['^(\\w+\\s?)*$', `${'word '.repeat(12)}!`],
  ['^(.*a){25}$', `${'a'.repeat(30)}b`],
  ['^([a-z0-9]+([._-][a-z0-9]+)*)+@x\\.com$', `${'a'.repeat(40)}@`],
  ['(\\d+)*\\.', '1'.repeat(50_000)],
];

describe('matching in linear time', () => {
  // The engine's first compile and match warm its code up; every timing below is a warm one.
  beforeAll(() => void textMatchesPattern('^(a|b)+$', 'ab'));

  // The fastest of 5 tries: a busy machine (CI runs two test workers on two cores) can stall any
  // one of them; a backtracking engine takes seconds on every try, so the bound still tells.
  it.each(catastrophic)('%s against its catastrophic input answers in under 50 ms', (pattern, text) => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      expect(textMatchesPattern(pattern, text)).toBe(false);
      times.push(performance.now() - started);
    }
    expect(Math.min(...times)).toBeLessThan(50);
  });

  it('bounds a match by the program size: the largest accepted program on the longest text', () => {
    // (a|aa|aaa|b){0,82} is just under the cap and defeats the lazy DFA on this text.
    const pattern = '(a|aa|aaa|b){0,82}(x|y)';
    expect(patternProblem(pattern)).toBeUndefined();
    const text = 'ab'.repeat(32 * 1024);
    const started = performance.now();
    expect(textMatchesPattern(pattern, text)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_000);
    // Ten more repetitions are over the cap, and refused.
    expect(patternProblem('(a|aa|aaa|b){0,93}(x|y)')).toMatch(String(PATTERN_MAX_INSTRUCTIONS));
  });
});

describe("ECMAScript's meaning, as RegExp without flags applies it (an unanchored search)", () => {
  const patterns = [
    'b+c',
    '^\\d+$',
    '^[a-z]+$',
    '^[A-Z][a-z]*(?: [A-Z][a-z]*)*$',
    '^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$',
    '^\\+?[0-9 ()-]{7,20}$',
    '^(?<year>\\d{4})-(?<month>\\d\\d)-\\d\\d$',
    '\\bcat\\b',
    '\\Bat',
    '^.{3,5}$',
    '^\\S+$',
    '^\\s*$',
    '^[\\s\\S]{2}$',
    '^[^]$',
    '[]',
    'colou?r',
    'a.c',
    '^\\w+$',
    '^\\W',
    '^[\\w.-]+$',
    '[\\d-x]',
    'x|^$',
    '\\x41\\u0042',
    '\\cJ',
    '[\\b]',
    '\\p{L}',
    '\\a\\e',
    '\\/\\.\\*',
    'a{2}',
    'a{,2}',
    'a{',
    '}]',
    '[[:digit:]]',
    '\\0',
    'é+',
    '^[à-ÿ]+$',
    'a*?b',
    '(?:ab)+$',
    '\\k<x>',
    '^$',
    '',
  ];
  const texts = [
    'abbc',
    'abd',
    'ABC',
    '12345',
    '12a45',
    'hello',
    'Hello World',
    'me@example.org',
    'me @example.org',
    '+44 (0) 20 7946-0958',
    '2026-11-28',
    'a cat sat',
    'concat',
    'bat',
    'ab',
    'abcd',
    'abcdef',
    'a\nb',
    'a\rc',
    'a\u2028c',
    'a\u00a0b',
    '\u3000',
    ' \t ',
    '',
    'x',
    '-',
    'color',
    'colour',
    'AB',
    '\n',
    '\b',
    'p{L}',
    'ae',
    '/.*',
    'aa',
    'a{,2}',
    'a{',
    '}]',
    '[:digit:]]',
    '\0',
    'éé',
    'çà',
    'aab',
    'abab',
    'k<x>',
    'a_b.c-d',
  ];

  it.each(patterns)('%s decides every text as RegExp does', (pattern) => {
    const native = new RegExp(pattern);
    const linear = compileTextPattern(pattern);
    const differing = texts.filter((text) => native.test(text) !== linear.test(text));
    expect(differing).toStrictEqual([]);
  });

  it('\\s, \\S and . take exactly the characters RegExp does, over the whole Basic Multilingual Plane', () => {
    const cases = ['^\\s$', '^\\S$', '^.$', '^[\\s]$', '^[\\S]$', '^[^\\s]$'].map((p) => ({
      native: new RegExp(p),
      linear: compileTextPattern(p),
      p,
    }));
    const differing: string[] = [];
    for (let unit = 0; unit <= 0xffff; unit += 1) {
      if (unit >= 0xd800 && unit <= 0xdfff) continue; // A lone surrogate is no text (§1.8, item 5).
      const text = String.fromCharCode(unit);
      for (const { native, linear, p } of cases) {
        if (native.test(text) !== linear.test(text)) differing.push(`${p} U+${unit.toString(16)}`);
      }
    }
    expect(differing).toStrictEqual([]);
  });

  it('matches code points: `.` takes a whole emoji, where RegExp without `u` takes half (docs/divergences.md)', () => {
    expect(textMatchesPattern('^.$', '😀')).toBe(true);
    expect(new RegExp('^.$').test('😀')).toBe(false);
    expect(textMatchesPattern('\\uD83D\\uDE00', 'a 😀')).toBe(true);
  });
});

describe('refusing what the linear-time engine cannot do', () => {
  it.each([
    ['a backreference', '(a)\\1'],
    ['a named backreference', '(?<x>a)\\k<x>'],
    ['an octal escape', '\\012'],
    ['a lookahead', '^(?=.*\\d).{8,}$'],
    ['a negative lookahead', '^(?!admin)\\w+$'],
    ['a lookbehind', '(?<=\\$)\\d+'],
    ['a negative lookbehind', '(?<!-)\\d+'],
    ['a repeat count above 1,000', 'a{1001}'],
    ['nested repeat counts above 1,000', '(?:a{100}){100}'],
    ['a group name RE2 cannot take', '(?<$x>a)'],
    ['ECMAScript syntax errors', '(abc'],
    ['an inline flag (not ECMAScript)', '(?i)abc'],
  ])('refuses %s', (_label, pattern) => {
    expect(patternProblem(pattern)).toEqual(expect.any(String));
    expect(() => compileTextPattern(pattern)).toThrow();
  });

  it('a refused pattern stored before the rule is met by no text', () => {
    expect(textMatchesPattern('(a)\\1', 'aa')).toBe(false);
    expect(textMatchesPattern('^(?=.*\\d).{8,}$', 'abcdefg1')).toBe(false);
  });
});
