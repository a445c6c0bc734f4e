/**
 * Where keyboard focus goes when the screen changes, so it is never lost on a hidden element:
 * opening a chat puts it on the composer on a wide screen, and on the chat's heading on a phone
 * (focusing the composer there would pop the on-screen keyboard up); coming back to the list from a
 * chat on a phone (the app's back link or the browser's back button) puts it on that chat's item.
 */
import { useEffect, useRef } from 'react';

/** The phone layout's media query (shared/base.css). */
export const PHONE_LAYOUT = '(max-width: 799px)';

const focusable = (el: Element | null): el is HTMLElement => el instanceof HTMLElement;

/** Focus is somewhere a person can see it (not on the body, nor on an element just hidden). */
function focusIsVisible(): boolean {
  const active = document.activeElement;
  return focusable(active) && active !== document.body && active.checkVisibility();
}

/** In the chat view: on opening a chat, focus its composer (wide screens) or its heading (phones). */
export function useFocusOnOpen(chatId: string): void {
  useEffect(() => {
    const target = window.matchMedia(PHONE_LAYOUT).matches
      ? document.querySelector('[data-testid="chat-heading"]')
      : document.getElementById('composer-text');
    if (focusable(target)) target.focus({ preventScroll: true });
  }, [chatId]);
}

/** In the chat list: when the open chat closes and focus was lost with it, focus that chat's item. */
export function useFocusOnReturn(selectedId: string | undefined): void {
  const previous = useRef(selectedId);
  useEffect(() => {
    const closed = previous.current;
    previous.current = selectedId;
    if (!closed || selectedId || focusIsVisible()) return;
    const link = document.querySelector(`[data-testid="chat-item"][data-chat-id="${CSS.escape(closed)}"] a`);
    if (focusable(link)) link.focus();
  }, [selectedId]);
}
