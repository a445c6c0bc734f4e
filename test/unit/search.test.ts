/** The pure parts of search (core/search.ts): query text, snippets, titles, ordering, merge plans. */
import { describe, expect, it } from '@jest/globals';
import {
  compareOrder,
  ftsQuery,
  messagesAfter,
  MAX_MERGED_DOCS,
  planMerge,
  renderSnippet,
  titleMatches,
} from '../../functions/core/search.js';
import type { OrderKey } from '../../functions/core/search.js';
import { MARK_CLOSE, MARK_OPEN } from '../../functions/platform/fts-segment.js';

describe('ftsQuery (§9.2)', () => {
  it.each([
    ['deploy', '"deploy" *'],
    ['  deploy   plan  ', '"deploy" "plan" *'],
    ['foo-bar baz', '"foo-bar" "baz" *'],
    ['say "hi"', '"say" """hi""" *'],
    ['foo AND', '"foo" "AND" *'],
    ['NEAR(a b)', '"NEAR(a" "b)" *'],
    ['col:value', '"col:value" *'],
    ['foo *', '"foo"'],
    ['* foo', '"foo" *'],
    ['東京 タワー', '"東京" "タワー" *'],
    ['café', '"café" *'],
  ])('%j → %j', (q, expected) => {
    expect(ftsQuery(q)).toBe(expected);
  });

  it.each(['*', '" "', '-- ::', '()'])('%j has no token: nothing can match', (q) => {
    expect(ftsQuery(q)).toBeUndefined();
  });
});

describe('renderSnippet (§9.3)', () => {
  it('escapes every special character and turns markers into <mark>', () => {
    const raw = `a & b < c > d " e ' ${MARK_OPEN}f<g${MARK_CLOSE} …`;
    expect(renderSnippet(raw)).toBe('a &amp; b &lt; c &gt; d &quot; e &#39; <mark>f&lt;g</mark> …');
  });

  it('leaves no raw tag from the text', () => {
    expect(renderSnippet('<script>alert(1)</script>')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe('titleMatches (§9.1)', () => {
  it.each([
    ['Alpha plan', 'ALPHA', true],
    ['Alpha plan', 'pha pl', true],
    ['100% done', '%', true],
    ['100 done', '%', false],
    ['snake_case', '_', true],
    ['snakecase', '_', false],
    ['a\\b', '\\', true],
    ['ab', '\\', false],
    ['École', 'école', false],
    ['École', 'École', true],
    ['Straße', 'STRASSE', false],
  ])('%j contains %j: %s', (title, q, expected) => {
    expect(titleMatches(title, q)).toBe(expected);
  });
});

describe('merged order (§9.4)', () => {
  const m = (ms: number, id: string): OrderKey => ({ ms, kind: 'message', id });
  const c = (ms: number, id: string): OrderKey => ({ ms, kind: 'chat', id });

  it('sorts by key desc, then messages before chats, then id desc', () => {
    const items = [c(3, 'a'), m(1, 'z'), m(3, 'b'), c(3, 'c'), m(3, 'd'), c(5, 'a')];
    expect(items.sort(compareOrder)).toEqual([c(5, 'a'), m(3, 'd'), m(3, 'b'), c(3, 'c'), c(3, 'a'), m(1, 'z')]);
  });

  it('resumes messages after a message cursor by id, after a chat cursor strictly older', () => {
    expect(messagesAfter(m(3, 'b'))).toEqual({ createdMs: 3, id: 'b' });
    expect(messagesAfter(c(3, 'b'))).toEqual({ createdMs: 3 });
    expect(messagesAfter(undefined)).toBeUndefined();
  });
});

describe('planMerge', () => {
  const seg = (docs: number, n: number) => ({
    key: `k${n}`,
    docs,
    bytes: docs * 100,
    minCreatedMs: n,
    maxCreatedMs: n,
  });

  it('merges eight segments of one size class, the smallest class first', () => {
    const small = Array.from({ length: 8 }, (_, i) => seg(1 + (i % 3), i));
    expect(planMerge(small)?.map((s) => s.key)).toEqual(small.map((s) => s.key));
    expect(planMerge(small.slice(1))).toBeUndefined();
    const mixed = [...Array.from({ length: 8 }, (_, i) => seg(64, 100 + i)), ...small];
    expect(planMerge(mixed)?.[0]?.key).toBe('k0');
  });

  it('never merges a segment at the size cap', () => {
    const big = Array.from({ length: 9 }, (_, i) => seg(MAX_MERGED_DOCS, i));
    expect(planMerge(big)).toBeUndefined();
  });

  it('keeps the segment count logarithmic while documents arrive one at a time', () => {
    let segments: ReturnType<typeof seg>[] = [];
    let rewritten = 0;
    for (let i = 0; i < 5_000; i++) {
      segments.push(seg(1, i));
      for (let group = planMerge(segments); group; group = planMerge(segments)) {
        const docs = group.reduce((n, s) => n + s.docs, 0);
        rewritten += docs;
        const gone = new Set(group.map((s) => s.key));
        segments = [...segments.filter((s) => !gone.has(s.key)), seg(docs, 10_000 + i)];
      }
    }
    expect(segments.reduce((n, s) => n + s.docs, 0)).toBe(5_000);
    expect(segments.length).toBeLessThanOrEqual(7 * 5);
    // Each document is rewritten once per size class it climbs (log8(5000) ≈ 4).
    expect(rewritten / 5_000).toBeLessThanOrEqual(5);
  });
});
