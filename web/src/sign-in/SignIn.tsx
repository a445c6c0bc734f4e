/**
 * The sign-in form. The secret is typed into a password field and sent once, in the body of
 * POST /api/v1/auth/session; the service answers with an HttpOnly session cookie. The page never
 * stores the secret: the field is cleared whatever the answer.
 */
import { useState } from 'react';
import type { FormEvent } from 'react';
import { api, ApiError } from '../api/client';

export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!secret || busy) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.signIn(secret);
      setSecret('');
      if (location.pathname === '/sign-in') history.replaceState(null, '', '/');
      onSignedIn();
    } catch (caught) {
      setSecret('');
      if (caught instanceof ApiError && caught.status === 401) setError('Wrong secret. Try again.');
      else if (caught instanceof ApiError && caught.status === 429)
        setError(`Too many attempts. Try again in ${formatWait(caught.retryAfterSeconds ?? 60)}.`);
      else setError(caught instanceof Error ? caught.message : String(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="sign-in-page">
      <form className="sign-in" onSubmit={(e) => void submit(e)} aria-labelledby="sign-in-heading">
        <h1 id="sign-in-heading">Sign in</h1>
        <p className="hint">Enter this instance&apos;s secret. This browser then stays signed in for 30 days.</p>
        <label htmlFor="instance-secret">Instance secret</label>
        <input
          id="instance-secret"
          type="password"
          autoComplete="current-password"
          autoFocus
          value={secret}
          onChange={(e) => setSecret(e.target.value)}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'sign-in-error' : undefined}
        />
        {error && (
          <p id="sign-in-error" role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy || !secret}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </div>
  );
}

const formatWait = (seconds: number) => (seconds < 90 ? `${seconds} seconds` : `${Math.ceil(seconds / 60)} minutes`);
