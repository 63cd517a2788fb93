// deployer login / logout: a person's session. The password (and the 2FA code when the account has two-factor) are
// asked on the terminal, never taken from argv; the refresh token is kept per server in a 0600 file and rotated on
// every use; logout revokes every token of the account (POST /auth/logout) and deletes it.
import { refusal, USER_AGENT } from '../api.js';
import { stringFlag } from '../args.js';
import { COMMON_FLAGS, type Command } from '../command.js';
import {
  credentialsFile,
  forgetLogin,
  readSaved,
  refreshFromCookies,
  refreshSavedLogin,
  saveLogin,
} from '../credentials.js';
import { CliError, EXIT, UnreachableError, UsageError } from '../errors.js';

const postJson = async (url: string, body: unknown, token?: string) => {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify(body),
    });
  } catch (error) {
    throw new UnreachableError(`cannot reach ${url}: ${(error as { cause?: { code?: string } }).cause?.code ?? error}`);
  }
  const text = await response.text();
  if (response.status >= 500 || response.status === 429) {
    const error = refusal(response.status, text);
    throw new UnreachableError(`${url} answered ${response.status} ${error.code}: ${error.message}`);
  }
  if (response.status >= 400) throw refusal(response.status, text);
  return { body: JSON.parse(text) as Record<string, unknown>, cookies: response.headers.getSetCookie() };
};

export const login: Command = {
  name: 'login',
  summary: 'sign in as a person (password, then the 2FA code when asked); keeps a refresh token',
  usage: 'deployer login [--email EMAIL]',
  description:
    'The password and code are asked on the terminal (read from stdin when it is not one), never taken from\n' +
    'arguments. The refresh token is kept in $XDG_CONFIG_HOME/deployer/credentials.json (mode 0600), per server.',
  flags: { email: { kind: 'string', value: 'EMAIL', help: 'the account (asked when absent)' }, ...COMMON_FLAGS },
  examples: ['deployer login --url https://deployer.example.com --email me@example.com'],
  run: async (ctx, parsed) => {
    if (parsed.positionals.length > 0) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`, 'login');
    const server = ctx.server();
    const email = stringFlag(parsed, 'email') ?? ((await ctx.io.prompt('Email: ', false)) ?? '').trim();
    if (!email) throw new UsageError('no email given', 'login');
    const password = (await ctx.io.prompt('Password: ', true)) ?? '';
    if (!password) throw new UsageError('no password given', 'login');
    let answer = await postJson(`${server}/api/v1/auth/login`, { email, password });
    if (answer.body['requires_2fa'] === true) {
      const code = ((await ctx.io.prompt('Two-factor code: ', false)) ?? '').trim();
      answer = await postJson(`${server}/api/v1/auth/2fa/verify`, {
        code,
        pending_token: answer.body['pending_token'],
      });
    }
    const refresh = refreshFromCookies(answer.cookies);
    if (refresh === undefined)
      throw new CliError(EXIT.unreachable, 'the service answered the login without a refresh token');
    const expiresIn = Number(answer.body['expires_in'] ?? 0);
    await saveLogin(credentialsFile(ctx.io.env), server, {
      refresh_token: refresh,
      email,
      access_token: String(answer.body['access_token']),
      access_expires_at: new Date(Date.now() + expiresIn * 1000).toISOString(),
    });
    const user = (answer.body['user'] ?? {}) as Record<string, unknown>;
    ctx.note(
      `Logged in to ${server} as ${user['email'] ?? email} (roles: ${((user['roles'] as string[]) ?? []).join(', ')})`,
    );
    return EXIT.ok;
  },
};

export const logout: Command = {
  name: 'logout',
  summary: 'sign out: revoke every token of the account and forget the saved login',
  usage: 'deployer logout',
  flags: { ...COMMON_FLAGS },
  examples: ['deployer logout'],
  run: async (ctx) => {
    const server = ctx.server();
    const file = credentialsFile(ctx.io.env);
    if ((await readSaved(file)).servers[server] === undefined) {
      ctx.note(`Not logged in to ${server}.`);
      return EXIT.ok;
    }
    try {
      const token = await refreshSavedLogin(server, file);
      await postJson(`${server}/api/v1/auth/logout`, {}, token);
    } catch (error) {
      // A login the server no longer accepts is gone anyway; anything else (unreachable) keeps the file.
      if (!(error instanceof CliError) || error.exitCode !== EXIT.refused) throw error;
    }
    await forgetLogin(file, server);
    ctx.note(`Logged out of ${server}.`);
    return EXIT.ok;
  },
};
