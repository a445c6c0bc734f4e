/**
 * The header's account menu: this browser's notifications switch; sign out this browser, or every
 * browser (replaces the signing key).
 */
import { useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import { NotificationsSwitch } from '../live/NotificationsSwitch';

export function AccountMenu({ onSignedOut }: { onSignedOut: () => void }) {
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const root = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent | KeyboardEvent) => {
      if (event instanceof KeyboardEvent ? event.key === 'Escape' : !root.current?.contains(event.target as Node))
        setOpen(false);
    };
    document.addEventListener('mousedown', close);
    document.addEventListener('keydown', close);
    return () => {
      document.removeEventListener('mousedown', close);
      document.removeEventListener('keydown', close);
    };
  }, [open]);

  async function signOut(everywhere: boolean) {
    setError(undefined);
    try {
      if (everywhere) await api.signOutEverywhere();
      await api.signOut();
      history.replaceState(null, '', '/sign-in');
      onSignedOut();
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
    }
  }

  return (
    <div className="account" ref={root}>
      <button type="button" aria-haspopup="true" aria-expanded={open} onClick={() => setOpen(!open)}>
        Account
      </button>
      {open && (
        <div className="menu" role="group" aria-label="Account">
          <NotificationsSwitch />
          <button type="button" onClick={() => void signOut(false)}>
            Sign out
          </button>
          <button type="button" onClick={() => void signOut(true)}>
            Sign out everywhere
          </button>
          {error && <p role="alert">{error}</p>}
        </div>
      )}
    </div>
  );
}
