// Sign in: email and password, then a 2FA code when the account has it.
import { useState } from 'preact/hooks';
import { isApiError, login, verifyTwoFactor, type User } from './api.js';

export const SignIn = ({ onSignedIn }: { onSignedIn: (user: User) => void }) => {
  const [pending, setPending] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

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
            Code from your authenticator app{' '}
            <input name="code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required />
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
    </section>
  );
};
