/**
 * Whether this browser holds a session, without asking the service (docs/web-app.md "Browser sessions"): the
 * session cookie is HttpOnly, so the service sets beside it a page-readable hint, `relay_signed_in`
 * (Path=/, SameSite=Strict, no secret in it: the session's expiry in epoch seconds), on sign-in and
 * renewal, and clears it on sign-out. The app reads it on load to choose between the sign-in form
 * and loading, so a signed-out load makes no request that fails (and logs an error in the console).
 * A session that ended elsewhere (signed out everywhere, the secret rotated) keeps its hint until a
 * request answers 401; the app then clears it.
 *
 * Also remembered: whether the instance's reads need a session (GET /config answers 401 without
 * one), learned from the configuration or from that 401, so a later signed-out load skips it.
 */
const HINT = 'relay_signed_in';
const READS_NEED_SESSION = 'relay.readsNeedSession';

/** The hint holds an expiry still ahead. */
export function sessionHinted(now = Date.now()): boolean {
  const entry = document.cookie
    .split(';')
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${HINT}=`));
  const expires = Number(entry?.slice(HINT.length + 1));
  return Number.isFinite(expires) && expires * 1000 > now;
}

/** Forgets the hint (the service answered 401: the session ended). */
export function clearSessionHint(): void {
  document.cookie = `${HINT}=; Path=/; Max-Age=0; SameSite=Strict`;
}

export function readsNeedSession(): boolean {
  try {
    return localStorage.getItem(READS_NEED_SESSION) === 'true';
  } catch {
    return false;
  }
}

export function rememberReadsNeedSession(value: boolean): void {
  try {
    if (value) localStorage.setItem(READS_NEED_SESSION, 'true');
    else localStorage.removeItem(READS_NEED_SESSION);
  } catch {
    // Storage refused (private mode): the next load asks again.
  }
}
