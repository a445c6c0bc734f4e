/**
 * The standalone sign-in page (/relay-sign-in.html): gets this browser the relay's session cookie
 * (docs/web-app.md "Browser sessions") for whatever UI the relay serves. The secret is sent once, in the
 * body of POST /api/v1/auth/session (same origin, so the HttpOnly cookie is set), and the field is
 * cleared whatever the answer; nothing is stored and nothing goes into a URL.
 *
 * - On load, a probe (the same POST with `{}`): 204 means this browser is signed in or the instance
 *   is open (GET /api/v1/config then says which): the page says so and links on; 401 shows the form.
 * - Sign in: 204 goes to `next` (a query parameter: a same-origin path with a single leading "/",
 *   else "/"); 401 "Wrong secret"; 429 the wait its Retry-After names.
 * - Sign out: DELETE /api/v1/auth/session, then the form again.
 */
(function () {
  'use strict';

  var SESSION = '/api/v1/auth/session';

  /** A path with one leading "/" (two, or a backslash there, would name another host). */
  function single(path) {
    return path.charAt(0) === '/' && path.charAt(1) !== '/' && path.charAt(1) !== '\\';
  }

  /** Where to go after signing in: `next` when it is a path of this origin, else "/". */
  function nextPath() {
    var value = new URLSearchParams(location.search).get('next');
    if (!value || !single(value)) return '/';
    try {
      var url = new URL(value, location.origin);
      // Checked again as resolved: "/.//host" resolves to the path "//host", which would leave.
      var path = url.pathname + url.search + url.hash;
      return url.origin === location.origin && single(path) ? path : '/';
    } catch {
      return '/';
    }
  }

  function el(id) {
    return document.getElementById(id);
  }

  var form = el('relay-sign-in-form');
  var input = el('relay-instance-secret');
  var submit = form.querySelector('button[type="submit"]');
  var error = el('relay-sign-in-error');
  var checking = el('relay-sign-in-checking');
  var signedIn = el('relay-signed-in');
  var signedInText = el('relay-signed-in-text');
  var continueLink = el('relay-continue');
  var notice = el('relay-sign-in-notice');
  var signOut = el('relay-sign-out');
  var next = nextPath();
  continueLink.setAttribute('href', next);

  function say(node, text) {
    node.textContent = text || '';
    node.hidden = !text;
  }

  function waitText(seconds) {
    return seconds < 90 ? seconds + ' seconds' : Math.ceil(seconds / 60) + ' minutes';
  }

  function session(method, body) {
    return fetch(SESSION, {
      method: method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  }

  function showForm() {
    say(checking, '');
    signedIn.hidden = true;
    signOut.hidden = true;
    form.hidden = false;
    input.focus();
  }

  /** Signed in or open: which one, from the configuration the session may now read. */
  function showSignedIn() {
    say(checking, '');
    form.hidden = true;
    signedInText.textContent = 'This browser is signed in.';
    signedIn.hidden = false;
    signOut.hidden = false;
    return fetch('/api/v1/config', { credentials: 'same-origin', cache: 'no-store' })
      .then(function (res) {
        return res.ok ? res.json() : undefined;
      })
      .then(function (config) {
        if (config && config.security && config.security.instanceSecretEnabled === false) {
          signedInText.textContent = 'This instance is open: no sign-in is needed.';
          signOut.hidden = true;
        }
      })
      .catch(function () {
        // The configuration is only a nicer message; the probe already answered.
      });
  }

  function probe() {
    return session('POST', {})
      .then(function (res) {
        if (res.status === 204) return showSignedIn();
        if (res.status === 401) return showForm();
        throw new Error('The relay answered ' + res.status + '.');
      })
      .catch(function (caught) {
        showForm();
        say(error, 'Could not reach the relay: ' + caught.message);
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var secret = input.value;
    input.value = '';
    if (!secret) return;
    say(error, '');
    say(notice, '');
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    session('POST', { secret: secret })
      .then(function (res) {
        if (res.status === 204) {
          location.assign(next);
          return;
        }
        if (res.status === 401) say(error, 'Wrong secret. Try again.');
        else if (res.status === 429) {
          var wait = Number(res.headers.get('retry-after'));
          say(error, 'Too many attempts. Try again in ' + waitText(wait > 0 ? wait : 60) + '.');
        } else say(error, 'Sign-in failed: the relay answered ' + res.status + '.');
        input.setAttribute('aria-invalid', 'true');
        input.focus();
      })
      .catch(function (caught) {
        say(error, 'Could not reach the relay: ' + caught.message);
      })
      .finally(function () {
        submit.disabled = false;
        submit.textContent = 'Sign in';
      });
  });

  input.addEventListener('input', function () {
    input.removeAttribute('aria-invalid');
  });

  signOut.addEventListener('click', function () {
    signOut.disabled = true;
    session('DELETE')
      .then(function (res) {
        if (res.status !== 204) throw new Error('the relay answered ' + res.status);
        showForm();
        say(notice, 'Signed out.');
      })
      .catch(function (caught) {
        say(notice, 'Sign-out failed: ' + caught.message);
      })
      .finally(function () {
        signOut.disabled = false;
      });
  });

  say(error, '');
  say(notice, '');
  probe();
})();
