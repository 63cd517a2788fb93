// The sign-in form of the local OpenID provider (local/oidc-provider.ts, `npm start -- --with-idp`): the
// authorization request rides along in hidden fields, and the users of this machine-only provider are listed.
/** A user the form lists, with the password to type (a machine-only provider). */
interface FormUser {
  readonly email: string;
  readonly password: string;
  readonly groups?: readonly string[];
}

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The sign-in form: the authorization request rides along in hidden fields, posted back to /authorize. */
export const signInForm = (
  title: string,
  params: URLSearchParams,
  users: readonly FormUser[],
  failed: boolean,
): string => {
  const hidden = [...params.entries()]
    .filter(([name]) => name !== 'email' && name !== 'password')
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const hints = users
    .map(
      (u) =>
        `<li><code>${escapeHtml(u.email)}</code> / <code>${escapeHtml(u.password)}</code>${
          (u.groups ?? []).length === 0 ? '' : ` (groups: ${escapeHtml((u.groups ?? []).join(', '))})`
        }</li>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in: ${escapeHtml(title)}</title>
<style>body{font:16px system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.75rem 0 .25rem}input[type=email],input[type=password]{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1rem}.error{color:#a00}code{overflow-wrap:anywhere}</style>
</head><body><main><h1>${escapeHtml(title)}</h1>
<p>A local OpenID provider for trying single sign-on on this machine.</p>
${failed ? '<p class="error" role="alert">Wrong email or password.</p>' : ''}
<form method="post" action="authorize">${hidden}
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<h2>Users</h2><ul>${hints}</ul></main></body></html>`;
};
