/**
 * A page of its own beside the inbox (Approvals, Decisions): a back link to the chats, its heading
 * (focused when the page opens, so a screen reader starts there), and its body, busy while its
 * first read is on its way.
 */
import { useEffect, useRef } from 'react';
import type { ReactNode } from 'react';
import { onLinkClick } from '../router';

export function ViewPage({
  name,
  title,
  busy,
  children,
}: {
  /** Its class, test id and heading id's stem. */
  name: string;
  title: string;
  busy: boolean;
  children: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus({ preventScroll: true }), []);
  return (
    <section className={`view-page ${name}`} aria-labelledby={`${name}-heading`} data-testid={name}>
      <header className="view-header">
        <a className="back" href="/" onClick={(e) => onLinkClick(e, '/')}>
          <span aria-hidden="true">‹</span>
          <span className="visually-hidden">Back to chats</span>
        </a>
        <h1 id={`${name}-heading`} ref={heading} tabIndex={-1}>
          {title}
        </h1>
      </header>
      <div className="view-body" aria-busy={busy || undefined}>
        {children}
      </div>
    </section>
  );
}
