/**
 * The "Notifications" switch (role switch): on subscribes this browser to the instance's web push,
 * off unsubscribes it. It says why when it cannot be on: the instance has push off, the browser
 * cannot receive pushes, or the permission was refused (only the browser's site settings undo that).
 */
import { useEffect, useId, useState } from 'react';
import { disablePush, enablePush, pushStatus } from './push';
import type { PushStatus } from './push';
import { useConfig } from '../shared/config';

export function NotificationsSwitch() {
  const config = useConfig();
  const [status, setStatus] = useState<PushStatus | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const noteId = useId();

  useEffect(() => {
    let current = true;
    void pushStatus(config).then((s) => current && setStatus(s));
    return () => {
      current = false;
    };
  }, [config]);

  async function toggle() {
    if (!status || busy) return;
    setBusy(true);
    setError(undefined);
    try {
      setStatus(await (status.state === 'on' ? disablePush(config) : enablePush(config)));
    } catch (caught) {
      setError(caught instanceof Error ? caught.message : String(caught));
      setStatus(await pushStatus(config).catch(() => status));
    } finally {
      setBusy(false);
    }
  }

  const on = status?.state === 'on';
  const note =
    status?.state === 'unavailable'
      ? status.reason
      : status?.state === 'denied'
        ? 'Notifications are blocked for this site: allow them in the browser’s site settings.'
        : undefined;
  return (
    <div className="notifications-switch" data-testid="notifications" data-state={status?.state ?? 'checking'}>
      <button
        type="button"
        role="switch"
        aria-checked={on}
        aria-describedby={note || error ? noteId : undefined}
        aria-busy={busy || !status}
        title={note}
        disabled={!status || busy || status.state === 'unavailable' || status.state === 'denied'}
        onClick={() => void toggle()}
      >
        <span className="switch-track" aria-hidden="true">
          <span className="switch-thumb" />
        </span>
        <span className="switch-label">Notifications</span>
      </button>
      {(note || error) && (
        <p id={noteId} className="switch-note" role={error ? 'alert' : undefined}>
          {error ?? note}
        </p>
      )}
    </div>
  );
}
