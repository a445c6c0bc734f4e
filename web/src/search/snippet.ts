/**
 * Search snippets as text and highlights, never as HTML. A message hit's snippet is HTML-escaped
 * text with `<mark>` … `</mark>` around matched tokens (contract §9.3): the marks become parts
 * flagged `mark`, the five entities the service escapes are decoded back to the characters they
 * stand for, and everything is rendered as React text, so no markup in a message can run or style.
 */
export interface SnippetPart {
  text: string;
  mark: boolean;
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (text: string): string => text.replace(/&(?:amp|lt|gt|quot|#39);/g, (entity) => ENTITIES[entity]!);

export function parseSnippet(snippet: string): SnippetPart[] {
  const parts: SnippetPart[] = [];
  let mark = false;
  for (const piece of snippet.split(/(<\/?mark>)/)) {
    if (piece === '<mark>') mark = true;
    else if (piece === '</mark>') mark = false;
    else if (piece) parts.push({ text: unescape(piece), mark });
  }
  return parts;
}

/**
 * A chat hit's snippet is its title, unescaped and without marks (§9.3): the matched substring
 * (case-insensitive, as the service matched it, §9.1) is marked here.
 */
export function highlightTitle(title: string, query: string): SnippetPart[] {
  const q = query.trim().toLowerCase();
  const lower = title.toLowerCase();
  const at = q && lower.length === title.length ? lower.indexOf(q) : -1;
  if (at === -1) return [{ text: title, mark: false }];
  return [
    { text: title.slice(0, at), mark: false },
    { text: title.slice(at, at + q.length), mark: true },
    { text: title.slice(at + q.length), mark: false },
  ].filter((part) => part.text);
}
