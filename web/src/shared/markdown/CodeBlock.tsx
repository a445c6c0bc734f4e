/**
 * A fenced code block: plain text at once, highlighted when highlight.js arrives (a separate chunk,
 * loaded on the first code block any message shows). highlight.js escapes the code it wraps in
 * spans, so its HTML output holds nothing from the message but text.
 */
import { useEffect, useState } from 'react';
import type * as HighlightModule from './highlight';

type Highlighter = typeof HighlightModule;
let loading: Promise<Highlighter> | undefined;
let loaded: Highlighter | undefined;

function highlighter(): Promise<Highlighter> {
  loading ??= import('./highlight').then((module) => (loaded = module));
  return loading;
}

export function CodeBlock({ code, language }: { code: string; language: string | undefined }) {
  const [html, setHtml] = useState<string | undefined>(() => loaded?.highlight(code, language));
  useEffect(() => {
    let live = true;
    if (loaded) setHtml(loaded.highlight(code, language));
    else void highlighter().then((h) => live && setHtml(h.highlight(code, language)));
    return () => {
      live = false;
    };
  }, [code, language]);
  return (
    // Focusable: a block wider than the screen scrolls sideways, and the keyboard must reach it too.
    <pre className="code-block" data-language={language} tabIndex={0}>
      {html === undefined ? (
        <code>{code}</code>
      ) : (
        // highlight.js output: the code, escaped, inside its own spans.
        <code className="hljs" dangerouslySetInnerHTML={{ __html: html }} />
      )}
    </pre>
  );
}
