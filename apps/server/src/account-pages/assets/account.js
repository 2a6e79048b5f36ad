/* global window, document */
// Skyferry account pages: sign in, sign up, sign out. Served as a file (the CSP forbids inline
// scripts). Messages go to the exact client origin the server validated, never '*'.
(function () {
  'use strict';
  var root = document.getElementById('account');
  if (!root) return;
  var page = root.getAttribute('data-page');
  var lang = root.getAttribute('data-lang') || 'en';
  var origin = root.getAttribute('data-origin');
  // The client's sign-in nonce: sent with the sign-in and handed back with the result, so the
  // client takes only the login data of a sign-in it started itself.
  var nonce = root.getAttribute('data-nonce') || '';

  function target() {
    if (window.parent && window.parent !== window) return window.parent;
    if (window.opener) return window.opener;
    return null;
  }

  function post(message) {
    var w = target();
    if (w && origin) w.postMessage(message, origin);
  }

  if (!origin) return;

  // Opened as a whole page (the no-cookie variant, or cookies blocked): no frame or opener to post
  // to, so hand the result to the client's callback routes at the validated origin instead.
  function topLevel() {
    return target() === null;
  }

  if (page === 'signout') {
    if (topLevel()) window.location.replace(origin + '/callback-logout');
    else post({ type: 'logout_success' });
    return;
  }

  var form = document.getElementById('account-form');
  var error = document.getElementById('error');
  var submit = document.getElementById('submit');
  var done = document.getElementById('done');
  if (!form || !error || !submit) return;
  var submitText = submit.textContent;

  form.addEventListener('input', function () {
    error.textContent = '';
  });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.textContent = '';
    var email = form.elements.namedItem('email').value;
    var password = form.elements.namedItem('password').value;
    var confirm = form.elements.namedItem('confirm');
    if (confirm && confirm.value !== password) {
      error.textContent = root.getAttribute('data-passwords-differ');
      return;
    }
    submit.disabled = true;
    submit.textContent = root.getAttribute('data-working');
    fetch(page === 'signup' ? '/api/account/signup' : '/api/account/login', {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json', 'x-language': lang },
      body: JSON.stringify(
        nonce ? { email: email, password: password, sign_in_nonce: nonce } : { email: email, password: password },
      ),
    })
      .then(function (response) {
        return response.json();
      })
      .then(function (body) {
        if (!body || body.code !== 0) {
          error.textContent = (body && body.msg) || root.getAttribute('data-network-error');
          return;
        }
        if (topLevel()) {
          // The fragment never reaches a server; the client drops it from history at once.
          window.location.replace(
            origin +
              '/callback-login#data=' +
              encodeURIComponent(JSON.stringify(body.data)) +
              (nonce ? '&nonce=' + encodeURIComponent(nonce) : ''),
          );
          return;
        }
        post({ type: 'login_success', data: body.data, nonce: nonce });
        form.hidden = true;
        var links = document.querySelector('.links');
        if (links) links.hidden = true;
        // Inside the client's frame the client takes over; alone, offer the way to the app.
        var open = document.getElementById('open-app');
        if (open && window.parent !== window) open.hidden = true;
        if (done) done.hidden = false;
      })
      .catch(function () {
        error.textContent = root.getAttribute('data-network-error');
      })
      .then(function () {
        submit.disabled = false;
        submit.textContent = submitText;
      });
  });
})();
