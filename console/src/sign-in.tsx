// Sign in: email and password, or one of the identity providers the API lists (public `GET /auth/sso`), then a 2FA
// code when the account has it (after a password, or after a provider not trusted for 2FA: the callback comes back
// with `#requires_2fa=true&pending_token=...`, which main.tsx hands in as `pendingToken`).
import { useEffect, useState } from 'preact/hooks';
import { api, isApiError, login, verifyTwoFactor, type User } from './api.js';

interface SignInProvider {
  readonly id: string;
  readonly name: string;
  readonly sign_in_url: string;
}

/** The provider's sign-in link, coming back to the route the console is on (the API accepts a relative path only). */
const signInLink = (provider: SignInProvider): string => {
  const url = new URL(provider.sign_in_url, window.location.href);
  url.searchParams.set('return_to', `/${window.location.hash}`);
  return url.href;
};

export const SignIn = ({
  onSignedIn,
  pendingToken,
}: {
  onSignedIn: (user: User) => void;
  pendingToken?: string | undefined;
}) => {
  const [pending, setPending] = useState<string | undefined>(pendingToken);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<readonly SignInProvider[]>([]);

  useEffect(() => {
    // No providers (or no answer) leaves the password form alone.
    api<{ data: SignInProvider[] }>('GET', '/auth/sso').then(
      (answer) => setProviders(answer.data),
      () => undefined,
    );
  }, []);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      if (pending === undefined) {
        const outcome = await login(String(form.get('email')), String(form.get('password')));
        if (outcome.kind === 'two_factor') setPending(outcome.pendingToken);
        else onSignedIn(outcome.user);
      } else onSignedIn(await verifyTwoFactor(pending, String(form.get('code'))));
    } catch (e) {
      setError(isApiError(e) ? e.message : 'The service cannot be reached.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to Deployer</h1>
      <form onSubmit={(e) => void submit(e)}>
        {pending === undefined ? (
          <>
            <label>
              Email <input name="email" type="email" autocomplete="username" required />
            </label>
            <label>
              Password <input name="password" type="password" autocomplete="current-password" required />
            </label>
          </>
        ) : (
          <label>
            Code from your authenticator app, or a recovery code{' '}
            <input
              name="code"
              autocomplete="one-time-code"
              autocapitalize="none"
              spellcheck={false}
              maxLength={32}
              required
              autoFocus
            />
          </label>
        )}
        {error === undefined ? null : (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {pending === undefined ? 'Sign in' : 'Verify'}
        </button>
      </form>
      {pending === undefined && providers.length > 0 ? (
        <nav class="sso" aria-label="Single sign-on">
          <p class="muted">Or</p>
          <ul class="plain">
            {providers.map((p) => (
              <li key={p.id}>
                <a class="button" href={signInLink(p)}>
                  Sign in with {p.name}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
    </section>
  );
};
