/** The screen for a path the app has no screen for, or cannot read (a malformed `/chats/%E0%A4%A`). */
import { onLinkClick } from '../router';

export function NotFound() {
  return (
    <section className="empty-detail not-found" aria-labelledby="not-found-heading" data-testid="not-found">
      <h1 id="not-found-heading">Page not found</h1>
      <p>There is nothing at this address.</p>
      <a href="/" onClick={(e) => onLinkClick(e, '/')}>
        Back to chats
      </a>
    </section>
  );
}
