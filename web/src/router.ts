/** The app's routes live in the URL path (a reload keeps the place; the hosts fall back to index.html). */
import { useSyncExternalStore } from 'react';

export type Route =
  | { name: 'inbox' }
  | { name: 'archived' }
  | { name: 'chat'; chatId: string }
  | { name: 'new' }
  | { name: 'sign-in' }
  | { name: 'settings' };

export function parse(path: string): Route {
  const chat = /^\/chats\/([^/]+)\/?$/.exec(path);
  if (chat) return { name: 'chat', chatId: decodeURIComponent(chat[1]!) };
  if (path === '/archived') return { name: 'archived' };
  if (path === '/new') return { name: 'new' };
  if (path === '/sign-in') return { name: 'sign-in' };
  if (path === '/settings') return { name: 'settings' };
  return { name: 'inbox' };
}

export function pathOf(route: Route): string {
  switch (route.name) {
    case 'chat':
      return `/chats/${encodeURIComponent(route.chatId)}`;
    case 'inbox':
      return '/';
    default:
      return `/${route.name}`;
  }
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((l) => l());
}

let cachedPath = '';
let cachedRoute: Route = { name: 'inbox' };
function current(): Route {
  if (location.pathname !== cachedPath) {
    cachedPath = location.pathname;
    cachedRoute = parse(cachedPath);
  }
  return cachedRoute;
}

export function useRoute(): Route {
  return useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, current);
}

/** A same-origin link that navigates without reloading the page. */
export function onLinkClick(event: React.MouseEvent<HTMLAnchorElement>, to: string): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  event.preventDefault();
  navigate(to);
}
