import { useSyncExternalStore } from 'react';
import { live } from './events';

const LABELS = { open: 'Live', connecting: 'Connecting…', offline: 'Offline, retrying…' } as const;

export function ConnectionStatus() {
  const state = useSyncExternalStore(
    (listener) => live.onState(listener),
    () => live.state,
  );
  return (
    <span className="connection" role="status" data-testid="connection" data-state={state}>
      <span className="dot" aria-hidden="true" />
      <span className={state === 'open' ? 'visually-hidden' : undefined}>{LABELS[state]}</span>
    </span>
  );
}
