// The authorization page's HTML: sign in, the 2FA code, consent, and errors. Plain server-rendered forms that work
// without JavaScript, styled inline, loading nothing from elsewhere; every value is escaped. The hidden `request`
// field is the sealed authorization request, `login` the sealed proof of who signed in (domain/oauth/ports.ts
// SealedNotes); the CSRF cookie's hash is inside `request`.
import type { RoleReservedPower } from '../../../domain/identity/delegation.js';
import { PERMISSIONS } from '../../../domain/identity/permissions.js';
import type { HttpResult } from '../../shared/http.js';

const escape = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f4f5f7;color:#1d2330;margin:0}
main{max-width:26rem;margin:8vh auto;background:#fff;border:1px solid #d8dbe2;border-radius:8px;padding:2rem}
h1{font-size:1.3rem;margin:0 0 .3rem}p.lead{color:#4a5264;margin:0 0 1.2rem}
label{display:block;font-weight:600;margin:.8rem 0 .25rem}
input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b9bfcc;border-radius:5px;font:inherit}
button{font:inherit;padding:.55rem 1.1rem;border-radius:5px;border:1px solid #2452c7;background:#2f5fe0;color:#fff;cursor:pointer;margin-top:1.2rem}
button.secondary,a.button.secondary{background:#fff;color:#2452c7}
a.button{display:inline-block;text-decoration:none;padding:.55rem 1.1rem;border-radius:5px;border:1px solid #2452c7;margin-top:.4rem}
.error{background:#fdecec;border:1px solid #e6a3a3;color:#8a1f1f;padding:.6rem .8rem;border-radius:5px;margin:0 0 1rem}
ul.scopes{padding-left:1.1rem;margin:.4rem 0}ul.scopes li{margin:.15rem 0}ul.scopes code{font-size:.85em;color:#4a5264}
.muted{color:#6a7284;font-size:.9rem}.row{display:flex;gap:.6rem}
.power{background:#fff6e0;border:1px solid #e3c26b;color:#5c4300;padding:.2rem .8rem;border-radius:5px;margin:.6rem 0}`;

/** Who may frame, where forms may go (Chrome applies form-action to the redirect after a POST as well). */
const headers = (formTargets: readonly string[]): Record<string, string> => ({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'${formTargets
    .map((t) => ` ${t}`)
    .join('')}; frame-ancestors 'none'`,
  'x-frame-options': 'DENY',
  // same-origin, not no-referrer: with no-referrer the browser posts the forms with `Origin: null`, which the CSRF
  // check refuses; other sites still get no Referer (the query carries the client's state).
  'referrer-policy': 'same-origin',
  'x-content-type-options': 'nosniff',
});

const page = (title: string, body: string): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
  `<title>${escape(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;

const hidden = (fields: Readonly<Record<string, string>>): string =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('');

const problem = (message: string | undefined): string =>
  message === undefined ? '' : `<p class="error" role="alert">${escape(message)}</p>`;

const answer = (
  statusCode: number,
  html: string,
  formTargets: readonly string[] = [],
  cookies?: string[],
): HttpResult => ({
  statusCode,
  body: html,
  headers: headers(formTargets),
  ...(cookies === undefined ? {} : { cookies }),
});

export interface PageContext {
  readonly clientName: string;
  /** The sealed authorization request. */
  readonly request: string;
  readonly cookies?: string[];
  /** Enabled identity providers, offered as "Sign in with ..." links. */
  readonly providers?: readonly { readonly id: string; readonly name: string }[];
}

const providerLinks = (ctx: PageContext): string =>
  ctx.providers === undefined || ctx.providers.length === 0
    ? ''
    : `<p class="muted">Or sign in with</p><div class="row">${ctx.providers
        .map(
          (p) =>
            `<a class="button secondary" href="/oauth/sso/${encodeURIComponent(p.id)}?request=${encodeURIComponent(ctx.request)}">${escape(p.name)}</a>`,
        )
        .join('')}</div>`;

export const loginPage = (ctx: PageContext, statusCode = 200, error?: string, email = ''): HttpResult =>
  answer(
    statusCode,
    page(
      'Sign in',
      `<h1>Sign in</h1><p class="lead"><strong>${escape(ctx.clientName)}</strong> asks to act on your behalf. Sign in to review what it asks for.</p>` +
        problem(error) +
        `<form method="post" action="/oauth/consent">${hidden({ request: ctx.request, step: 'login' })}` +
        `<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${escape(email)}">` +
        `<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>` +
        `<button type="submit">Sign in</button></form>${providerLinks(ctx)}`,
    ),
    [],
    ctx.cookies,
  );

export const twoFactorPage = (ctx: PageContext, pendingToken: string, statusCode = 200, error?: string): HttpResult =>
  answer(
    statusCode,
    page(
      'Two-factor code',
      `<h1>Two-factor code</h1><p class="lead">Enter the 6-digit code from your authenticator app, or a recovery code.</p>` +
        problem(error) +
        `<form method="post" action="/oauth/consent">${hidden({ request: ctx.request, step: 'two_factor', pending_token: pendingToken })}` +
        `<label for="code">Code</label><input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required>` +
        `<button type="submit">Verify</button></form>`,
    ),
  );

const describe = (scope: string): string => PERMISSIONS.find((p) => p.name === scope)?.description ?? scope;

export const consentPage = (
  ctx: PageContext,
  login: string,
  view: {
    email: string;
    granted: readonly string[];
    withheld: readonly string[];
    redirectOrigin: string;
    /** What the granted scopes carry only because of the user's role (domain/identity/delegation.ts). */
    rolePowers?: readonly RoleReservedPower[];
  },
): HttpResult => {
  const list = (scopes: readonly string[]) =>
    `<ul class="scopes">${scopes.map((s) => `<li>${escape(describe(s))} <code>${escape(s)}</code></li>`).join('')}</ul>`;
  const granted =
    view.granted.length === 0
      ? `<p class="error">You hold none of the permissions this application asks for: it cannot act for you.</p>`
      : `<p><strong>${escape(ctx.clientName)}</strong> will be able to:</p>${list(view.granted)}`;
  const powers = view.rolePowers ?? [];
  const rolePowers =
    powers.length === 0
      ? ''
      : `<div class="power" data-testid="role-powers"><p><strong>Because you hold the ${escape([...new Set(powers.map((p) => p.role))].join(' and '))} role</strong>, ` +
        `these permissions also let <strong>${escape(ctx.clientName)}</strong> do what only your role allows:</p>` +
        `<ul class="scopes">${powers.map((p) => `<li>${escape(p.power)} <code>${escape(p.permission)}</code></li>`).join('')}</ul>` +
        `<p class="muted">Allow only if this application should have that power.</p></div>`;
  const withheld =
    view.withheld.length === 0
      ? ''
      : `<p class="muted">Asked for, but not yours to give (not granted):</p>${list(view.withheld)}`;
  const allow = view.granted.length === 0 ? '' : `<button type="submit" name="decision" value="allow">Allow</button>`;
  return answer(
    200,
    page(
      'Allow access?',
      `<h1>Allow access?</h1><p class="lead">Signed in as <strong>${escape(view.email)}</strong>.</p>${granted}${rolePowers}${withheld}` +
        `<p class="muted">You are sent back to ${escape(view.redirectOrigin)}. The access follows your own permissions: ` +
        `if you lose one, the application loses it too.</p>` +
        `<form method="post" action="/oauth/consent">${hidden({ request: ctx.request, step: 'consent', login })}` +
        `<div class="row">${allow}<button type="submit" class="secondary" name="decision" value="deny">Deny</button></div></form>`,
    ),
    [view.redirectOrigin],
  );
};

/** A problem that must not be sent to the client's redirect URI (unknown client, unregistered URI, a stale page). */
export const errorPage = (statusCode: number, message: string): HttpResult =>
  answer(
    statusCode,
    page(
      'Cannot continue',
      `<h1>Cannot continue</h1>${problem(message)}<p class="muted">Go back to the application and start again.</p>`,
    ),
  );

/** 303 See Other to the client's redirect URI (the authorization response). */
export const redirectTo = (location: string, cookies?: string[]): HttpResult => ({
  statusCode: 303,
  headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  ...(cookies === undefined ? {} : { cookies }),
});
