/**
 * The app's frame: find out whether this browser may use the service (the instance is open, or its
 * session cookie is valid), show the sign-in form if not, and otherwise the inbox and the open chat
 * side by side (one at a time on a phone), kept live by the tab's one event stream.
 */
import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import { api, ApiError, setUnauthorizedHandler } from './api/client';
import { queryClient } from './api/query-client';
import { clearSessionHint, readsNeedSession, rememberReadsNeedSession, sessionHinted } from './sign-in/session-hint';
import { AccountMenu } from './sign-in/AccountMenu';
import { ConnectionStatus } from './live/ConnectionStatus';
import { NewChat } from './inbox/NewChat';
import { NotFound } from './shared/NotFound';
import { Sidebar } from './inbox/Sidebar';
import { NotificationsSwitch } from './live/NotificationsSwitch';
import { SignIn } from './sign-in/SignIn';
import { SkipLinks } from './shared/SkipLinks';
import { ViewLinks } from './approvals/ApprovalsLink';
import type { ChatsView } from './inbox/chats';
import { startLiveCache } from './live-cache';
import { navigate, onLinkClick, pathOf, useInboxFilter, useRoute } from './router';
import { putConfig, useConfig } from './shared/config';

// The settings screen is its own chunk: most visits never open it, and the initial JavaScript stays small.
const Settings = lazy(() => import('./settings/Settings').then((m) => ({ default: m.Settings })));
// So are the Approvals and Decisions views (the badge beside the first is in the initial script).
const Approvals = lazy(() => import('./approvals/Approvals').then((m) => ({ default: m.Approvals })));
const Decisions = lazy(() => import('./decisions/Decisions').then((m) => ({ default: m.Decisions })));
// So is the open chat (its markdown renderer, requests and media): the inbox draws without it, and
// the signed-in app fetches it when the browser is next idle (loadChatView), or at once for a chat's URL.
const loadChatView = () => import('./chat/ChatView');
const ChatView = lazy(() => loadChatView().then((m) => ({ default: m.ChatView })));

type Access =
  { state: 'checking' } | { state: 'signed-out' } | { state: 'in' } | { state: 'unreachable'; message: string };

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Access />
    </QueryClientProvider>
  );
}

function Access() {
  const [access, setAccess] = useState<Access>({ state: 'checking' });

  /**
   * Whether to show the sign-in form or load, with no request that fails on an ordinary load: the
   * session hint (sign-in/session-hint.ts) says whether this browser holds a session; without one, only
   * an instance that might be open is asked for its configuration. `afterSignIn`: the form was just
   * accepted (an instance with the secret off accepts anything and sets no hint).
   */
  const check = useCallback(async (afterSignIn = false) => {
    try {
      const hinted = sessionHinted() || afterSignIn;
      if (!hinted && readsNeedSession()) {
        setAccess({ state: 'signed-out' });
        return;
      }
      // GET /config may itself need a credential (readEndpointsRequireInstanceSecret): then the
      // secret is on and only a session gets in.
      const config = await api.config().catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 401) return undefined;
        throw error;
      });
      const security = config?.security;
      rememberReadsNeedSession(
        !security || (security.instanceSecretEnabled && security.readEndpointsRequireInstanceSecret),
      );
      const open = security ? !security.instanceSecretEnabled : false;
      // Signed out: no hint, or a hint the service no longer honours (a 401 above, or from the probe).
      if (!open && (!hinted || !config || !(await api.probeSession()))) {
        if (hinted) clearSessionHint();
        setAccess({ state: 'signed-out' });
        return;
      }
      putConfig(config ?? (await api.config()));
      setAccess({ state: 'in' });
    } catch (error) {
      setAccess({ state: 'unreachable', message: error instanceof Error ? error.message : String(error) });
    }
  }, []);

  useEffect(() => {
    void check();
    setUnauthorizedHandler(() => {
      clearSessionHint();
      signedOut();
    });
  }, [check]);

  /** Signed out: nothing read under the session stays in the cache. */
  const signedOut = () => {
    setAccess({ state: 'signed-out' });
    queryClient.clear();
  };

  if (access.state === 'checking') return <div className="splash" aria-busy="true" />;
  if (access.state === 'unreachable') {
    return (
      <div className="splash">
        <p role="alert">{access.message}</p>
        <button type="button" onClick={() => void check()}>
          Try again
        </button>
      </div>
    );
  }
  if (access.state === 'signed-out') return <SignIn onSignedIn={() => void check(true)} />;
  return <Shell onSignedOut={signedOut} />;
}

function Shell({ onSignedOut }: { onSignedOut: () => void }) {
  const route = useRoute();
  const filter = useInboxFilter();
  const { appName, security } = useConfig();
  const open = !security.instanceSecretEnabled;
  // The list beside a chat (or the settings) is the view last shown: the inbox or the archived chats.
  const lastView = useRef<ChatsView>('inbox');
  if (route.name === 'inbox' || route.name === 'archived') lastView.current = route.name;

  // The instance's name (GET /config `appName`) is the page's title; an open chat puts its own title first.
  useEffect(() => {
    document.title = appName;
  }, [appName]);

  useEffect(() => startLiveCache(queryClient), []);
  useEffect(() => {
    // Once the first screen is drawn: its own work comes first.
    const idle = window.requestIdleCallback ?? ((run: () => void) => setTimeout(run, 200));
    idle(() => void loadChatView());
  }, []);

  useEffect(() => {
    if (route.name === 'sign-in') navigate(pathOf({ name: 'inbox' }), { replace: true });
  }, [route.name]);

  const detail = route.name !== 'inbox' && route.name !== 'archived';
  return (
    <div className="app" data-screen={detail ? 'detail' : 'list'}>
      <SkipLinks chatOpen={route.name === 'chat'} />
      <header className="topbar">
        <span className="brand" dir="auto" data-testid="app-name">
          {appName}
        </span>
        {open && (
          <span className="open-instance" role="status" data-testid="open-instance">
            This instance is open: anyone who can reach it can read and write.
          </span>
        )}
        <ConnectionStatus />
        <nav className="view-links" aria-label="Views">
          <ViewLinks current={route.name} />
          <a
            className="button settings-link"
            href="/settings"
            aria-current={route.name === 'settings' ? 'page' : undefined}
            onClick={(e) => onLinkClick(e, '/settings')}
          >
            Settings
          </a>
        </nav>
        {open ? <NotificationsSwitch /> : <AccountMenu onSignedOut={onSignedOut} />}
      </header>
      <div className="panes">
        <nav className="sidebar" aria-label="Chats">
          <Sidebar route={route} view={lastView.current} filter={filter} />
        </nav>
        <main className="detail">
          {route.name === 'chat' ? (
            <Suspense fallback={<div className="empty-detail" aria-busy="true" />}>
              <ChatView key={route.chatId} chatId={route.chatId} messageId={route.messageId} />
            </Suspense>
          ) : route.name === 'new' ? (
            <NewChat />
          ) : route.name === 'settings' ? (
            <Suspense fallback={<div className="empty-detail" aria-busy="true" />}>
              <Settings onSignedOut={onSignedOut} />
            </Suspense>
          ) : route.name === 'approvals' || route.name === 'decisions' ? (
            <Suspense fallback={<div className="empty-detail" aria-busy="true" />}>
              {route.name === 'approvals' ? <Approvals /> : <Decisions />}
            </Suspense>
          ) : route.name === 'not-found' ? (
            <NotFound />
          ) : (
            <div className="empty-detail">
              <p>Pick a chat, or start a new one.</p>
            </div>
          )}
        </main>
      </div>
    </div>
  );
}
