/**
 * Message text as GitHub-flavoured markdown. react-markdown builds React elements from the syntax
 * tree and never injects HTML: raw HTML in a message is shown as the text it is, never rendered as
 * markup (react-markdown turns raw nodes into text unless told to drop them, and dropping would
 * hide what the agent wrote), so message content cannot script the page. Links open in a new tab
 * without the opener or a referrer; only http(s), mailto and relative URLs are kept (react-markdown's
 * default filter). Code blocks are highlighted once highlight.js has loaded, lazily, on the first
 * code block seen.
 */
import { memo } from 'react';
import ReactMarkdown from 'react-markdown';
import type { Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { splitBlocks } from './blocks';
import { CodeBlock } from './CodeBlock';

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  pre: ({ node: _node, children }) => <>{children}</>,
  code: ({ node: _node, className, children }) => {
    const language = /language-([\w+-]+)/.exec(className ?? '')?.[1];
    const text = String(children ?? '');
    const block = language !== undefined || text.includes('\n');
    if (!block) return <code>{children}</code>;
    return <CodeBlock code={text.replace(/\n$/, '')} language={language} />;
  },
  // A table wider than the message scrolls sideways (chat/messages.css): focusable so the keyboard can scroll it.
  table: ({ node: _node, ...props }) => <table {...props} tabIndex={0} />,
  img: ({ node: _node, alt }) => <span className="md-image-alt">{alt ? `[image: ${alt}]` : '[image]'}</span>,
};

const plugins = [remarkGfm];

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={plugins} components={components}>
      {text}
    </ReactMarkdown>
  );
});

/**
 * A reply still streaming: its text split into blocks at blank lines outside code fences, each
 * rendered on its own, so a chunk re-renders only the last block whatever the message's length.
 * (A loose list may show as several lists until the reply completes; then it renders whole.)
 */
export function StreamingMarkdown({ text }: { text: string }) {
  const blocks = splitBlocks(text);
  return (
    <>
      {blocks.map((block, i) => (
        <Markdown key={i} text={block} />
      ))}
    </>
  );
}
