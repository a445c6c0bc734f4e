/**
 * The first stops of the Tab order, shown only when focused: straight to the chat list, and with a
 * chat open, straight to its message box, so a keyboard user does not Tab through the header and
 * the list each time.
 */
import type { MouseEvent } from 'react';

/** Focuses the first element found by the selectors, tried in order (when it is visible). */
function focusFirst(...selectors: string[]) {
  return (event: MouseEvent<HTMLAnchorElement>) => {
    const target = selectors.map((s) => document.querySelector(s)).find((el) => el !== null);
    if (!(target instanceof HTMLElement) || !target.checkVisibility()) return;
    event.preventDefault();
    target.focus();
  };
}

export function SkipLinks({ chatOpen }: { chatOpen: boolean }) {
  return (
    <div className="skip-links">
      {chatOpen && (
        <a href="#composer-text" onClick={focusFirst('#composer-text')}>
          Skip to message box
        </a>
      )}
      <a
        href="#chat-list"
        onClick={focusFirst('[data-testid="chat-item"] a', '[data-testid="search-hit"] a', '.chat-list-pane a')}
      >
        Skip to chats
      </a>
    </div>
  );
}
