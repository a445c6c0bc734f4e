/** Loaded lazily (CodeBlock.tsx): highlight.js with its common languages and its theme. */
import hljs from 'highlight.js/lib/common';
import 'highlight.js/styles/github.css';
import './highlight-dark.css';
import './highlight-contrast.css';

/** Long blocks are shown plain: highlighting them would block the page while a reply streams. */
const MAX_HIGHLIGHTED_CHARS = 20_000;

export function highlight(code: string, language: string | undefined): string | undefined {
  if (code.length > MAX_HIGHLIGHTED_CHARS) return undefined;
  // Without a named language the block stays plain: guessing runs every grammar, every frame of a stream.
  if (!language || !hljs.getLanguage(language)) return undefined;
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
