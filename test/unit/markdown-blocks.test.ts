import { describe, expect, it } from '@jest/globals';
import { splitBlocks } from '../../web/src/shared/markdown/blocks.js';

describe('splitBlocks (a streaming reply rendered block by block)', () => {
  it('splits at blank lines, dropping them', () => {
    expect(splitBlocks('one\ntwo\n\nthree\n\n\n- a\n- b')).toEqual(['one\ntwo', 'three', '- a\n- b']);
  });

  it('keeps a fenced code block whole, blank lines included, for both fence characters', () => {
    const text = 'intro\n\n```ts\nconst a = 1;\n\nconst b = 2;\n```\n\nafter\n\n~~~~\nx\n\n~~~\ny\n~~~~';
    expect(splitBlocks(text)).toEqual([
      'intro',
      '```ts\nconst a = 1;\n\nconst b = 2;\n```',
      'after',
      '~~~~\nx\n\n~~~\ny\n~~~~',
    ]);
  });

  it('an unclosed fence (still streaming) holds the rest of the text', () => {
    expect(splitBlocks('a\n\n```\ncode\n\nmore')).toEqual(['a', '```\ncode\n\nmore']);
  });

  it('empty and blank texts have no blocks', () => {
    expect(splitBlocks('')).toEqual([]);
    expect(splitBlocks('\n\n  \n')).toEqual([]);
  });
});
