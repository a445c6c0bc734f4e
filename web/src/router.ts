/** The app's routes live in the URL path (a reload keeps the place; the hosts fall back to index.html). */
import { useMemo, useSyncExternalStore } from 'react';

export type Route =
  | { name: 'inbox' }
  | { name: 'archived' }
  | {
      name: 'chat';
      chatId: string;
      /** `?message=`: open the chat at this message (a search hit). */ messageId?: string;
    }
  | { name: 'new' }
  | { name: 'sign-in' }
  | { name: 'settings' }
  /** Every chat's pending requests, and the decision log (§5.5.6). */
  | { name: 'approvals' }
  | { name: 'decisions' }
  /** A path the app has no screen for, or one it cannot read (`/chats/%E0%A4%A`). */
  | { name: 'not-found' };

/** A path segment decoded, or undefined when it is not valid percent-encoded UTF-8 (decodeURIComponent throws). */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function parse(path: string, search = ''): Route {
  const chat = /^\/chats\/([^/]+)\/?$/.exec(path);
  if (chat) {
    const chatId = decodeSegment(chat[1]!);
    if (chatId === undefined) return { name: 'not-found' };
    const messageId = new URLSearchParams(search).get('message') || undefined;
    return { name: 'chat', chatId, ...(messageId ? { messageId } : {}) };
  }
  if (path === '/archived') return { name: 'archived' };
  if (path === '/new') return { name: 'new' };
  if (path === '/sign-in') return { name: 'sign-in' };
  if (path === '/settings') return { name: 'settings' };
  if (path === '/approvals') return { name: 'approvals' };
  if (path === '/decisions') return { name: 'decisions' };
  if (path === '/' || path === '' || path === '/index.html') return { name: 'inbox' };
  return { name: 'not-found' };
}

export function pathOf(route: Route): string {
  switch (route.name) {
    case 'chat':
      return `/chats/${encodeURIComponent(route.chatId)}${route.messageId ? `?message=${encodeURIComponent(route.messageId)}` : ''}`;
    case 'inbox':
      return '/';
    default:
      return `/${route.name}`;
  }
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/**
 * The inbox filters live in the URL query (`?tag=…&agent=…`) on every route, so a reload keeps
 * them and opening a chat keeps the filtered list beside it: navigation carries them over unless
 * the target names them itself. Only setInboxFilter changes them.
 */
const FILTER_PARAMS = { tag: 'tag', agentId: 'agent' } as const;
export interface InboxFilter {
  tag?: string;
  agentId?: string;
}

export function filterOf(search: string): InboxFilter {
  const params = new URLSearchParams(search);
  const tag = params.get(FILTER_PARAMS.tag) || undefined;
  const agentId = params.get(FILTER_PARAMS.agentId) || undefined;
  return { ...(tag ? { tag } : {}), ...(agentId ? { agentId } : {}) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = new URL(to, location.origin);
  const here = new URLSearchParams(location.search);
  for (const key of Object.values(FILTER_PARAMS)) {
    const value = here.get(key);
    if (value && !url.searchParams.has(key)) url.searchParams.set(key, value);
  }
  go(url.pathname + url.search, options.replace);
}

/** Sets (or, with undefined, clears) inbox filters on the current route. */
export function setInboxFilter(patch: InboxFilter): void {
  const params = new URLSearchParams(location.search);
  for (const [field, key] of Object.entries(FILTER_PARAMS)) {
    if (!(field in patch)) continue;
    const value = patch[field as keyof InboxFilter];
    if (value) params.set(key, value);
    else params.delete(key);
  }
  const search = params.toString();
  go(location.pathname + (search ? `?${search}` : ''), true);
}

function go(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  listeners.forEach((l) => l());
}

let cachedPath = '';
let cachedRoute: Route = { name: 'inbox' };
function current(): Route {
  const path = location.pathname + location.search;
  if (path !== cachedPath) {
    cachedPath = path;
    const next = parse(location.pathname, location.search);
    // The same place (only the filters changed): keep the object, so route-keyed effects stay put.
    if (JSON.stringify(next) !== JSON.stringify(cachedRoute)) cachedRoute = next;
  }
  return cachedRoute;
}

/** The inbox filters in the URL, re-read whenever the URL changes. */
export function useInboxFilter(): InboxFilter {
  const search = useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => location.search,
  );
  return useMemo(() => filterOf(search), [search]);
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
