import { describe, expect, it } from '@jest/globals';
import { parseSnippet } from '../../web/src/search/snippet.js';
import { plainSnippet } from '../../web/src/search/plain-snippet.js';

/** The parts written back as `[marked]` text, for compact expectations. */
const shown = (snippet: string) =>
  plainSnippet(parseSnippet(snippet))
    .map((p) => (p.mark ? `[${p.text}]` : p.text))
    .join('');

describe('plainSnippet (a search hit’s excerpt as plain text, highlights kept)', () => {
  it.each([
    ['# <mark>Hello</mark>\n\n- one\n- two\n\n```js\nconst a = 1;\n```', '[Hello] one two const a = 1;'],
    ['…in **<mark>bold</mark>** and `<mark>code</mark>` here…', '…in [bold] and [code] here…'],
    ['> quoted <mark>zebra</mark>\n> line two', 'quoted [zebra] line two'],
    ['| a | <mark>cell</mark> |\n|---|---|\n| b | c |', 'a [cell] b c'],
    ['[the <mark>link</mark>](https://x.test/link) after', 'the [link] after'],
    ['Tom &amp; <mark>Jerry</mark> &lt;b&gt;', 'Tom & [Jerry] <b>'],
    ['<mark>alpha</mark> <mark>beta</mark>', '[alpha] [beta]'],
    ['cut off in the **<mark>mid</mark>', 'cut off in the **[mid]'],
    ['---', '---'],
  ])('%j shows %j', (snippet, expected) => {
    expect(shown(snippet)).toBe(expected);
  });

  it('marks nothing the service did not mark, even the same word elsewhere', () => {
    expect(shown('# plan\n\n<mark>plan</mark> b')).toBe('plan [plan] b');
  });
});
