/* global window, document */
// Skyferry account pages: sign in, sign up, sign out, forgotten password, and the pages of mailed
// links (set a new password, confirm a new e-mail address). Served as a file (the CSP forbids
// inline scripts). Messages go to the exact client origin the server validated, never '*'.
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
  var text = function (name) {
    return root.getAttribute('data-' + name) || '';
  };
  var linkPage = page === 'forgot' || page === 'reset' || page === 'confirm-email';

  function target() {
    if (window.parent && window.parent !== window) return window.parent;
    if (window.opener) return window.opener;
    return null;
  }

  function post(message) {
    var w = target();
    if (w && origin) w.postMessage(message, origin);
  }

  if (!origin && !linkPage) return;

  // Opened as a whole page (the no-cookie variant, or cookies blocked): no frame or opener to post
  // to, so hand the result to the client's callback routes at the validated origin instead.
  function topLevel() {
    return target() === null;
  }

  // The client's login panel titles itself after the page it shows (sign in, sign up, reset).
  if (origin && !topLevel()) post({ type: 'account_page', page: page });

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

  function input(name) {
    return form.elements.namedItem(name);
  }

  /** Shows each field's problem beside it, all at once; answers whether there was any. */
  function showFieldErrors(problems) {
    var any = false;
    ['email', 'password', 'confirm'].forEach(function (name) {
      var el = input(name);
      var line = document.getElementById(name + '-error');
      if (!el || !line) return;
      var problem = problems[name] || '';
      line.textContent = problem;
      if (problem) {
        el.setAttribute('aria-invalid', 'true');
        any = true;
      } else el.removeAttribute('aria-invalid');
    });
    return any;
  }

  form.addEventListener('input', function (event) {
    error.textContent = '';
    var name = event.target && event.target.name;
    var line = name ? document.getElementById(name + '-error') : null;
    if (line) line.textContent = '';
    if (name && event.target.removeAttribute) event.target.removeAttribute('aria-invalid');
  });

  /** What the browser can tell before asking the server: every field's problem. */
  function localProblems() {
    var problems = {};
    var email = input('email');
    var password = input('password');
    var confirm = input('confirm');
    if (email) {
      var value = email.value.trim();
      if (value === '') problems.email = text('email-empty');
      else if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) problems.email = text('email-format');
    }
    if (password) {
      if (password.value === '' && page === 'signin') problems.password = text('password-empty');
      else if (page !== 'signin' && password.value.length < Number(text('min-password') || 8))
        problems.password = text('password-short');
    }
    if (confirm && password && confirm.value !== password.value) problems.confirm = text('passwords-differ');
    return problems;
  }

  function request() {
    var token = input('token');
    var email = input('email');
    var password = input('password');
    switch (page) {
      case 'signup':
      case 'signin': {
        return {
          url: page === 'signup' ? '/api/account/signup' : '/api/account/login',
          body: nonce
            ? { email: email.value, password: password.value, sign_in_nonce: nonce }
            : { email: email.value, password: password.value },
        };
      }
      case 'forgot':
        return { url: '/api/account/password/forgot', body: { email: email.value } };
      case 'reset':
        return { url: '/api/account/password/reset', body: { token: token.value, new_password: password.value } };
      case 'confirm-email':
        return { url: '/api/account/email/confirm', body: { token: token.value } };
      default:
        return null;
    }
  }

  function finish(body) {
    if (linkPage) {
      form.hidden = true;
      var back = document.querySelector('.links.back');
      if (back && page !== 'forgot') back.hidden = true;
      var doneText = document.getElementById('done-text');
      if (doneText) doneText.textContent = body.msg || '';
      if (done) done.hidden = false;
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
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    error.textContent = '';
    if (showFieldErrors(localProblems())) return;
    var call = request();
    if (!call) return;
    submit.disabled = true;
    submit.textContent = text('working');
    fetch(call.url, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json', 'x-language': lang },
      body: JSON.stringify(call.body),
    })
      .then(function (response) {
        return response.json();
      })
      .then(function (body) {
        if (!body || body.code !== 0) {
          var fields = body && body.data && body.data.fields;
          var shown = fields && typeof fields === 'object' ? showFieldErrors(fields) : false;
          if (!shown) error.textContent = (body && body.msg) || text('network-error');
          return;
        }
        finish(body);
      })
      .catch(function () {
        error.textContent = text('network-error');
      })
      .then(function () {
        submit.disabled = false;
        submit.textContent = submitText;
      });
  });
})();
