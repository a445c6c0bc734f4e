/**
 * A `text_input` request's `config.validation.pattern` (contract §2.3.1, §5.5.4), matched in
 * linear time: an agent's pattern never runs on a backtracking engine, the service's or the
 * browser's (`^(a+)+$` against 34 `a` and a `!` took JavaScript's RegExp over a minute). The
 * service (core/request-config.ts) and the web app (web/src/components/Requests.tsx) both match
 * through this module, so they keep one rule.
 *
 * The pattern is written in ECMAScript syntax, without flags, and applied as an unanchored search
 * (§5.5.4). It is translated to RE2's syntax (the `re2js` engine) keeping ECMAScript's meaning for
 * what RE2 spells differently: `.` excludes the four line terminators, `\s` is ECMAScript's
 * whitespace, `[^]` and `[]`, `\cX`, `\uXXXX`, `[\b]`, and identity escapes such as `\p` or `\a`
 * (a plain letter without the `u` flag). What RE2 cannot do is refused (docs/divergences.md
 * "Request validation patterns"):
 * backreferences and octal escapes, lookahead and lookbehind, a repeat count above 1,000, and a
 * program of more than PATTERN_MAX_INSTRUCTIONS instructions, which bounds a match's cost (about
 * 0.15 s at worst for the longest text a resolution carries, 64 KiB). Matching runs on code
 * points where ECMAScript without `u` sees UTF-16 code units: `.` takes a whole emoji.
 */
import { RE2JS } from 're2js';

/** The largest compiled program accepted: a match costs up to program size × text length. */
export const PATTERN_MAX_INSTRUCTIONS = 1_000;

/** Why a pattern cannot be used; `message` is for logs and tests, callers say the contract's sentence. */
export class PatternError extends Error {
  override name = 'PatternError';
}

export interface TextPattern {
  /** Whether the pattern occurs anywhere in `text` (an unanchored search). */
  test(text: string): boolean;
}

/** ECMAScript's WhiteSpace and LineTerminator code points, as ranges: what `\s` matches. */
const SPACE_RANGES: readonly (readonly [number, number])[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (n: number) => `\\x{${n.toString(16).toUpperCase()}}`;
const rangeText = ([from, to]: readonly [number, number]) => (from === to ? hex(from) : `${hex(from)}-${hex(to)}`);

function complement(ranges: readonly (readonly [number, number])[]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [from, to] of ranges) {
    if (from > next) out.push([next, from - 1]);
    next = to + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

/** Class contents (without brackets) for `\s` and `\S`. */
const SPACE = SPACE_RANGES.map(rangeText).join('');
const NOT_SPACE = complement(SPACE_RANGES).map(rangeText).join('');
/** ECMAScript's `.` without the `s` flag: anything but \n, \r, U+2028 and U+2029. */
const DOT = `[^${hex(0x0a)}${hex(0x0d)}${hex(0x2028)}${hex(0x2029)}]`;
const ANYTHING = `[${hex(0)}-${hex(MAX_CODE_POINT)}]`;
const NOTHING = `[^${hex(0)}-${hex(MAX_CODE_POINT)}]`;

const isHex = (s: string | undefined, length: number) =>
  s !== undefined && s.length === length && /^[0-9A-Fa-f]+$/.test(s);
const isAsciiLetter = (c: string | undefined) => c !== undefined && /^[A-Za-z]$/.test(c);
const isHighSurrogate = (n: number) => n >= 0xd800 && n <= 0xdbff;
const isLowSurrogate = (n: number) => n >= 0xdc00 && n <= 0xdfff;

/**
 * One escape at `p[i] === '\\'`: its RE2 spelling and how many characters it takes. Follows
 * ECMAScript's grammar without `u` (Annex B), where an unknown escaped letter is that letter.
 */
function escape(p: string, i: number, inClass: boolean, namedGroups: boolean): [string, number] {
  const c = p[i + 1];
  if (c === undefined) throw new PatternError('A pattern cannot end with a backslash.');
  switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
      return [`\\${c}`, 2];
    case 's':
      return [inClass ? SPACE : `[${SPACE}]`, 2];
    case 'S':
      return [inClass ? NOT_SPACE : `[${NOT_SPACE}]`, 2];
    case 'b':
      return [inClass ? hex(0x08) : '\\b', 2];
    case 'B':
      return [inClass ? 'B' : '\\B', 2];
    case 't':
      return [hex(0x09), 2];
    case 'n':
      return [hex(0x0a), 2];
    case 'v':
      return [hex(0x0b), 2];
    case 'f':
      return [hex(0x0c), 2];
    case 'r':
      return [hex(0x0d), 2];
    case 'c': {
      const letter = p[i + 2];
      if (isAsciiLetter(letter) || (inClass && letter !== undefined && /^[0-9_]$/.test(letter))) {
        return [hex(letter!.charCodeAt(0) % 32), 3];
      }
      return ['\\\\', 1]; // A lone `\c` is a backslash; the `c` follows as itself.
    }
    case 'x': {
      const digits = p.slice(i + 2, i + 4);
      return isHex(digits, 2) ? [hex(parseInt(digits, 16)), 4] : ['x', 2];
    }
    case 'u': {
      const digits = p.slice(i + 2, i + 6);
      if (!isHex(digits, 4)) return ['u', 2];
      const unit = parseInt(digits, 16);
      const low = p.slice(i + 8, i + 12);
      if (!inClass && isHighSurrogate(unit) && p.slice(i + 6, i + 8) === '\\u' && isHex(low, 4)) {
        const second = parseInt(low, 16);
        if (isLowSurrogate(second)) return [hex(0x10000 + (unit - 0xd800) * 0x400 + (second - 0xdc00)), 12];
      }
      return [hex(unit), 6];
    }
    case 'k':
      if (namedGroups) throw new PatternError('Backreferences are not supported.');
      return ['k', 2];
  }
  if (c === '0' && !/^[0-9]$/.test(p[i + 2] ?? '')) return [hex(0), 2];
  if (/^[0-9]$/.test(c)) throw new PatternError('Backreferences and octal escapes are not supported.');
  if (isAsciiLetter(c) || c === '_') return [c, 2];
  // ASCII punctuation keeps its escape (RE2 takes any); anything else is itself.
  if (c.charCodeAt(0) < 0x80) return [`\\${c}`, 2];
  return [c, 2];
}

/** ECMAScript pattern syntax (no flags) → RE2 syntax with the same meaning; throws PatternError. */
export function translatePattern(p: string): string {
  const namedGroups = /\(\?<[^=!]/.test(p);
  let out = '';
  let inClass = false;
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '\\') {
      const [text, taken] = escape(p, i, inClass, namedGroups);
      const classEscape = taken === 2 && 'dDwWsS'.includes(p[i + 1]!);
      out += text;
      i += taken;
      // After a class escape inside a class, a `-` is a literal (Annex B), never a range.
      if (inClass && classEscape && p[i] === '-' && p[i + 1] !== ']') {
        out += '\\-';
        i += 1;
      }
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c === '[' ? '\\[' : c;
      i += 1;
      continue;
    }
    if (c === '[') {
      if (p.startsWith('[]', i)) {
        out += NOTHING;
        i += 2;
      } else if (p.startsWith('[^]', i)) {
        out += ANYTHING;
        i += 3;
      } else {
        const negated = p[i + 1] === '^';
        out += negated ? '[^' : '[';
        i += negated ? 2 : 1;
        inClass = true;
      }
      continue;
    }
    if (c === '(' && /^\(\?(?:[=!]|<[=!])/.test(p.slice(i, i + 4))) {
      throw new PatternError('Lookahead and lookbehind are not supported.');
    }
    out += c === '.' ? DOT : c;
    i += 1;
  }
  return out;
}

/**
 * Compiles an agent's pattern, or throws PatternError: it must compile as an ECMAScript regular
 * expression (§2.3.1) and, translated, in RE2 within PATTERN_MAX_INSTRUCTIONS.
 */
export function compileTextPattern(pattern: string): TextPattern {
  try {
    new RegExp(pattern); // Compiling only: nothing is matched, so nothing backtracks.
  } catch (error) {
    throw new PatternError((error as Error).message);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(translatePattern(pattern));
  } catch (error) {
    if (error instanceof PatternError) throw error;
    throw new PatternError((error as Error).message);
  }
  const size = compiled.re2().numberOfInstructions() as number;
  if (size > PATTERN_MAX_INSTRUCTIONS) {
    throw new PatternError(`The pattern compiles to ${size} instructions, over ${PATTERN_MAX_INSTRUCTIONS}.`);
  }
  return { test: (text) => compiled.test(text) };
}

/** Why `pattern` cannot be used, or undefined when it can. */
export function patternProblem(pattern: string): string | undefined {
  try {
    compileTextPattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

/**
 * Whether `text` satisfies `pattern` (§5.5.4: an unanchored search). A pattern this module
 * refuses (one stored before it existed) is satisfied by no text: the agent's rule cannot be
 * checked, so no answer is taken as meeting it; the agent can PATCH the request's config.
 */
export function textMatchesPattern(pattern: string, text: string): boolean {
  let compiled: TextPattern;
  try {
    compiled = compileTextPattern(pattern);
  } catch (error) {
    if (error instanceof PatternError) return false;
    throw error;
  }
  return compiled.test(text);
}
