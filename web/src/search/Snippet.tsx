/** Renders snippet parts (./snippet.ts): marks as <mark> elements, the rest as text. */
import { Fragment } from 'react';
import type { SnippetPart } from './snippet';

export function Snippet({ parts }: { parts: SnippetPart[] }) {
  return (
    <span className="snippet" data-testid="search-snippet">
      {parts.map((part, i) =>
        part.mark ? <mark key={i}>{part.text}</mark> : <Fragment key={i}>{part.text}</Fragment>,
      )}
    </span>
  );
}
