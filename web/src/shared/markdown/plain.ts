/**
 * Markdown as the plain text a reader sees, for one-line previews (the chat list): the service
 * keeps a message's first 180 characters as written, markup and all ("## Plan\n\nSteps, in
 * **order**"). Parsed by the parser the messages render with (mdast, with GitHub's extensions),
 * then each block's text, a space between blocks: "Plan Steps, in order". Images read as their
 * alt text, code as its text, raw HTML as the text it is (as messages show it). Markup cut off by
 * the 180 characters ("**ord") stays as written.
 */
import type { Nodes } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { gfm } from 'micromark-extension-gfm';

/** Nodes whose children are blocks (or rows, cells): their texts are joined with a space. */
export const BLOCK_PARENTS = new Set([
  'root',
  'blockquote',
  'list',
  'listItem',
  'table',
  'tableRow',
  'footnoteDefinition',
]);

function textOf(node: Nodes): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
    case 'code':
    case 'html':
      return node.value;
    case 'image':
    case 'imageReference':
      return node.alt ?? '';
    case 'break':
    case 'thematicBreak':
      return ' ';
    case 'definition':
      return '';
    default:
      if (!('children' in node)) return '';
      return (node.children as Nodes[]).map(textOf).join(BLOCK_PARENTS.has(node.type) ? ' ' : '');
  }
}

export function plainText(markdown: string): string {
  const tree = fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
  return textOf(tree).replace(/\s+/g, ' ').trim();
}

/** Texts already turned plain (the list re-renders on every event; each preview parses once). */
const seen = new Map<string, string>();
const SEEN_MAX = 500;

/** A chat's preview as plain text; as written when nothing readable is left ("---"). */
export function previewText(preview: string): string {
  let plain = seen.get(preview);
  if (plain === undefined) {
    plain = plainText(preview) || preview;
    if (seen.size >= SEEN_MAX) seen.delete(seen.keys().next().value!);
    seen.set(preview, plain);
  }
  return plain;
}
