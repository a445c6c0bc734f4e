/**
 * A search snippet as the plain text a reader sees, keeping the service's highlights (issue 33
 * item 15): a message hit's snippet is an excerpt of the message as written, markup and all
 * (`# Hello - one ```js`), with `<mark>` around matched tokens (contract §9.3). Its parts
 * (search/snippet.ts parseSnippet) are joined into that raw text, parsed as the messages and
 * the inbox previews parse it (./plain.ts), and every character of the plain text keeps the offset
 * of the raw character it comes from, so a highlight covers exactly the plain characters whose
 * source was marked, wherever the markup moved them.
 */
import type { Nodes } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';
import type { SnippetPart } from './snippet.js';
import { BLOCK_PARENTS } from '../shared/markdown/plain.js';

/** One character of the plain text and the offset in the raw text it comes from (-1: none). */
interface Traced {
  char: string;
  at: number;
}

/**
 * `value` (a node's text: markup, escapes and line prefixes gone) traced back into the raw
 * `[start, end)` it was parsed from: each character at the next raw position holding it, or where
 * the last one was when the source spells it otherwise (`&amp;` for `&`).
 */
function trace(value: string, raw: string, start: number | undefined, end: number | undefined): Traced[] {
  if (start === undefined || end === undefined) return [...value].map((char) => ({ char, at: -1 }));
  const out: Traced[] = [];
  let p = start;
  for (const char of value) {
    let q = p;
    while (q < end && raw.slice(q, q + char.length) !== char) q++;
    if (q < end) {
      out.push({ char, at: q });
      p = q + char.length;
    } else out.push({ char, at: Math.min(p, end - 1) });
  }
  return out;
}

function traced(node: Nodes, raw: string): Traced[] {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  switch (node.type) {
    case 'text':
    case 'inlineCode':
    case 'code':
    case 'html':
      return trace(node.value, raw, start, end);
    case 'image':
    case 'imageReference':
      return trace(node.alt ?? '', raw, start, end);
    case 'break':
    case 'thematicBreak':
      return [{ char: ' ', at: -1 }];
    case 'definition':
      return [];
    default: {
      if (!('children' in node)) return [];
      const children = (node.children as Nodes[]).map((child) => traced(child, raw));
      if (!BLOCK_PARENTS.has(node.type)) return children.flat();
      return children.flatMap((chars, i) => (i === 0 ? chars : [{ char: ' ', at: -1 }, ...chars]));
    }
  }
}

/** Whitespace runs as one space, none at the ends (as plainText). */
function collapse(chars: Traced[]): Traced[] {
  const out: Traced[] = [];
  for (const c of chars) {
    const space = /\s/.test(c.char);
    if (space && (out.length === 0 || out[out.length - 1]!.char === ' ')) continue;
    out.push(space ? { char: ' ', at: c.at } : c);
  }
  if (out.at(-1)?.char === ' ') out.pop();
  return out;
}

/** The snippet's parts as plain text, the marked characters still marked; as given when nothing readable is left. */
export function plainSnippet(parts: SnippetPart[]): SnippetPart[] {
  let raw = '';
  const marked: [number, number][] = [];
  for (const part of parts) {
    if (part.mark) marked.push([raw.length, raw.length + part.text.length]);
    raw += part.text;
  }
  const tree = fromMarkdown(raw, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  const chars = collapse(traced(tree, raw));
  if (chars.length === 0) return parts;
  const isMarked = (at: number) => at >= 0 && marked.some(([from, to]) => at >= from && at < to);
  const out: SnippetPart[] = [];
  for (const { char, at } of chars) {
    const mark = isMarked(at);
    const last = out.at(-1);
    if (last && last.mark === mark) last.text += char;
    else out.push({ text: char, mark });
  }
  return out;
}
