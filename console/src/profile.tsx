// The signed-in user's own page (#/profile, from their name in the header): who they are, a new password, two-factor
// (set up with a QR code and the secret as text, confirmed with a code; recovery codes shown once with Copy and
// Download, regenerated with a code; turned off with a code), and signing out of every session.
import { useEffect, useState } from 'preact/hooks';
import { renderSVG } from 'uqr';
import { api, changePassword, errorText, logoutEverywhere, logoutHere } from './api.js';
import { when } from './format.js';
import { CopyButton, SecretOnce } from './copy-widgets.js';
import { ErrorLine, NoticeLine } from './widgets.js';

interface Me {
  readonly id: string;
  readonly email: string;
  readonly username: string;
  readonly display_name: string | null;
  readonly roles: string[];
  readonly last_login_at: string | null;
  readonly two_factor_enabled: boolean;
  readonly two_factor_recovery_codes_left: number;
}

/** A changing section's own error and notice lines: `run(work, done)` shows the API's refusal or `done`. */
const useOutcome = () => {
  const [error, setError] = useState<string | undefined>();
  const [notice, setNotice] = useState<string | undefined>();
  const run = async <T,>(work: () => Promise<T>, done: string): Promise<T | undefined> => {
    setError(undefined);
    setNotice(undefined);
    try {
      const result = await work();
      setNotice(done);
      return result;
    } catch (e) {
      setError(errorText(e));
      return undefined;
    }
  };
  return { error, notice, setError, run };
};

/** The codes as a text file the browser saves. */
const download = (codes: readonly string[], email: string) => {
  const text = `Deployer recovery codes for ${email}\nEach code works once, in place of a code from your authenticator app.\n\n${codes.join('\n')}\n`;
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = 'deployer-recovery-codes.txt';
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
};

const RecoveryCodes = ({ codes, email, onDone }: { codes: readonly string[]; email: string; onDone: () => void }) => (
  <SecretOnce title="Your recovery codes" secret={codes.join('\n')} id="recovery-codes" onDone={onDone}>
    <button type="button" onClick={() => download(codes, email)}>
      Download as .txt
    </button>
  </SecretOnce>
);

const CodeField = ({ id }: { id: string }) => (
  <label>
    Code from your authenticator app
    <input
      id={id}
      name="code"
      inputMode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      maxLength={6}
      required
    />
  </label>
);

/** Two-factor on, and how many recovery codes are left. */
const CodesLeft = ({ left }: { left: number }) => (
  <p data-testid="two-factor-state">
    Two-factor is <strong>on</strong>. Recovery codes left: <strong data-testid="codes-left">{left}</strong> of 10.
    {left <= 3 ? ' Running low: issue new ones.' : ''}
  </p>
);

/** A change to two-factor that a current code confirms. */
const CodeForm = ({
  title,
  note,
  id,
  submit,
  onSubmit,
}: {
  title: string;
  note: string;
  id: string;
  submit: string;
  onSubmit: (event: SubmitEvent) => void;
}) => (
  <form class="stack-form" aria-label={title} onSubmit={onSubmit}>
    <fieldset>
      <legend>{title}</legend>
      <p class="muted">{note}</p>
      <CodeField id={id} />
      <div>
        <button type="submit">{submit}</button>
      </div>
    </fieldset>
  </form>
);

const Password = () => {
  const { error, notice, setError, run } = useOutcome();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const next = String(form.get('new_password'));
    if (next !== String(form.get('confirm_password'))) return setError('The new password and its confirmation differ.');
    const done = await run(
      () => changePassword(String(form.get('current_password')), next),
      'Password changed. Every other session of your account is signed out.',
    );
    if (done !== undefined) formElement.reset();
  };
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form class="stack-form" aria-label="Change password" onSubmit={(e) => void submit(e)}>
        <label>
          Current password <input name="current_password" type="password" autocomplete="current-password" required />
        </label>
        <label>
          New password
          <input name="new_password" type="password" autocomplete="new-password" minLength={8} required />
        </label>
        <label>
          Confirm the new password
          <input name="confirm_password" type="password" autocomplete="new-password" minLength={8} required />
        </label>
        <div>
          <button type="submit">Change password</button>
        </div>
        <ErrorLine message={error} />
        <NoticeLine message={notice} />
      </form>
    </section>
  );
};

const TwoFactor = ({ me, reload }: { me: Me; reload: () => Promise<void> }) => {
  const { error, notice, run } = useOutcome();
  const [setup, setSetup] = useState<{ secret: string; otpauth_url: string } | undefined>();
  const [codes, setCodes] = useState<string[] | undefined>();

  const start = async () => {
    setCodes(undefined);
    const answer = await run(
      () => api<{ secret: string; otpauth_url: string }>('POST', '/auth/2fa/setup', {}),
      'Scan the code, then enter the code your app shows.',
    );
    if (answer !== undefined) setSetup(answer);
  };
  const withCode = async (
    event: SubmitEvent,
    path: string,
    done: string,
  ): Promise<{ recovery_codes?: string[] } | undefined> => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const code = String(new FormData(formElement).get('code')).trim();
    const answer = await run(() => api<{ recovery_codes?: string[] }>('POST', path, { code }), done);
    formElement.reset();
    if (answer !== undefined) await reload();
    return answer;
  };
  const enable = async (event: SubmitEvent) => {
    const answer = await withCode(event, '/auth/2fa/enable', 'Two-factor authentication is on.');
    if (answer === undefined) return;
    setSetup(undefined);
    setCodes(answer.recovery_codes);
  };
  const regenerate = async (event: SubmitEvent) => {
    const answer = await withCode(
      event,
      '/auth/2fa/recovery-codes',
      'New recovery codes issued: the earlier ones no longer work.',
    );
    if (answer !== undefined) setCodes(answer.recovery_codes);
  };
  const disable = async (event: SubmitEvent) => {
    const answer = await withCode(event, '/auth/2fa/disable', 'Two-factor authentication is off.');
    if (answer !== undefined) setCodes(undefined);
  };

  const qr =
    setup === undefined
      ? undefined
      : `data:image/svg+xml;charset=utf-8,${encodeURIComponent(renderSVG(setup.otpauth_url, { border: 2 }))}`;
  return (
    <section aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor authentication</h2>
      <ErrorLine message={error} />
      <NoticeLine message={notice} />
      {me.two_factor_enabled ? (
        <>
          <CodesLeft left={me.two_factor_recovery_codes_left} />
          {codes === undefined ? null : (
            <RecoveryCodes codes={codes} email={me.email} onDone={() => setCodes(undefined)} />
          )}
          <CodeForm
            title="New recovery codes"
            note="Replaces every recovery code you have: the earlier ones stop working."
            id="regenerate-code"
            submit="Issue new recovery codes"
            onSubmit={(e) => void regenerate(e)}
          />
          <CodeForm
            title="Turn off two-factor"
            note="Your password alone will sign you in; your recovery codes are discarded."
            id="disable-code"
            submit="Turn off two-factor"
            onSubmit={(e) => void disable(e)}
          />
        </>
      ) : setup === undefined ? (
        <>
          <p data-testid="two-factor-state">
            Two-factor is <strong>off</strong>: a stolen password is enough to sign in as you.
          </p>
          <button type="button" onClick={() => void start()}>
            Set up two-factor
          </button>
        </>
      ) : (
        <form class="stack-form" aria-label="Turn on two-factor" onSubmit={(e) => void enable(e)}>
          <ol class="steps">
            <li>
              Scan this code with an authenticator app (any that supports TOTP):
              <div>
                <img class="qr" src={qr} alt="QR code of the two-factor secret for your authenticator app" />
              </div>
            </li>
            <li>
              Or type the secret into the app:{' '}
              <code id="totp-secret" data-testid="totp-secret">
                {setup.secret}
              </code>{' '}
              <CopyButton text={setup.secret} select="totp-secret">
                Copy the secret
              </CopyButton>
            </li>
            <li>
              <CodeField id="enable-code" />
            </li>
          </ol>
          <div class="buttons">
            <button type="submit">Turn on two-factor</button>
            <button type="button" onClick={() => setSetup(undefined)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {!me.two_factor_enabled && codes !== undefined ? (
        <RecoveryCodes codes={codes} email={me.email} onDone={() => setCodes(undefined)} />
      ) : null}
    </section>
  );
};

const Sessions = ({ onSignedOut }: { onSignedOut: () => void }) => {
  const [error, setError] = useState<string | undefined>();
  const signOut = async (end: () => Promise<void>) => {
    try {
      await end();
    } catch (e) {
      return setError(errorText(e));
    }
    onSignedOut();
  };
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p>
        <strong>Sign out here</strong> ends this browser's session only (as the header's Sign out does): your other
        browsers and devices stay signed in.
      </p>
      <p>
        <strong>Sign out everywhere</strong> ends every session of your account: this browser, every other browser and
        device, and the apps you allowed to act as you. Use it when a device or a password may be in other hands. Your
        API keys keep working until you revoke them.
      </p>
      <ErrorLine message={error} />
      <div class="buttons">
        <button type="button" onClick={() => void signOut(logoutHere)}>
          Sign out here
        </button>
        <button type="button" onClick={() => void signOut(logoutEverywhere)}>
          Sign out everywhere
        </button>
      </div>
    </section>
  );
};

export const Profile = ({ onSignedOut }: { onSignedOut: () => void }) => {
  const [me, setMe] = useState<Me | undefined>();
  const [error, setError] = useState<string | undefined>();
  const load = () =>
    api<Me>('GET', '/auth/me').then(
      (answer) => setMe(answer),
      (e: unknown) => setError(errorText(e)),
    );
  useEffect(() => {
    void load();
  }, []);
  return (
    <section aria-labelledby="profile-title" class="profile">
      <h1 id="profile-title">Your profile</h1>
      <ErrorLine message={error} />
      {me === undefined ? null : (
        <>
          <dl class="facts">
            <dt>Name</dt>
            <dd>{me.display_name ?? '—'}</dd>
            <dt>Email</dt>
            <dd>{me.email}</dd>
            <dt>Username</dt>
            <dd>{me.username}</dd>
            <dt>Roles</dt>
            <dd>{me.roles.join(', ') || '—'}</dd>
            <dt>Last sign-in</dt>
            <dd>{when(me.last_login_at)}</dd>
          </dl>
          <Password />
          <TwoFactor me={me} reload={load} />
          <Sessions onSignedOut={onSignedOut} />
        </>
      )}
    </section>
  );
};
