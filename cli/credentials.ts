// Where the bearer credential comes from, in this order: --api-key-file, DEPLOYER_API_KEY, DEPLOYER_CLIENT_ID +
// DEPLOYER_CLIENT_SECRET (OAuth client credentials at /oauth/token), the saved login of `deployer login` (a refresh
// token per server in $XDG_CONFIG_HOME/deployer/credentials.json, mode 0600, rotated on every use).
import { chmod, mkdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { refusal, USER_AGENT, type TokenSource } from './api.js';
import { CliError, EXIT, UnreachableError, UsageError } from './errors.js';

export type Env = Readonly<Record<string, string | undefined>>;

export const credentialsFile = (env: Env): string =>
  join(env['XDG_CONFIG_HOME'] || join(env['HOME'] || homedir(), '.config'), 'deployer', 'credentials.json');

interface SavedLogin {
  readonly refresh_token: string;
  readonly email?: string;
  readonly saved_at: string;
  /** The last access token and when it expires (ISO 8601): reused while it has a minute left. */
  readonly access_token?: string;
  readonly access_expires_at?: string;
}
type Saved = { servers: Record<string, SavedLogin> };

export const readSaved = async (file: string): Promise<Saved> => {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Saved;
    return parsed && typeof parsed.servers === 'object' && parsed.servers !== null ? parsed : { servers: {} };
  } catch {
    return { servers: {} };
  }
};

/** Writes the file (0600, its folder 0700) through a temporary file, so a crash never leaves half a file. */
export const writeSaved = async (file: string, saved: Saved): Promise<void> => {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, file);
};

export const saveLogin = async (file: string, server: string, login: Omit<SavedLogin, 'saved_at'>) => {
  const saved = await readSaved(file);
  saved.servers[server] = { ...login, saved_at: new Date().toISOString() };
  await writeSaved(file, saved);
};

export const forgetLogin = async (file: string, server: string): Promise<boolean> => {
  const saved = await readSaved(file);
  if (saved.servers[server] === undefined) return false;
  delete saved.servers[server];
  await writeSaved(file, saved);
  return true;
};

export const REFRESH_COOKIE = 'deployer_refresh';

/** The refresh token a Set-Cookie list carries, if any. */
export const refreshFromCookies = (setCookies: readonly string[]): string | undefined => {
  for (const cookie of setCookies) {
    const [pair] = cookie.split(';');
    const eq = pair?.indexOf('=') ?? -1;
    if (pair !== undefined && eq > 0 && pair.slice(0, eq).trim() === REFRESH_COOKIE) {
      const value = pair.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
};

const post = async (url: string, init: RequestInit): Promise<Response> => {
  try {
    return await fetch(url, { method: 'POST', ...init, headers: { 'user-agent': USER_AGENT, ...init.headers } });
  } catch (error) {
    throw new UnreachableError(`cannot reach ${url}: ${(error as { cause?: { code?: string } }).cause?.code ?? error}`);
  }
};

/**
 * One process at a time refreshes a saved login: the service treats a refresh token used twice as stolen and
 * revokes the login, so two commands started together must not both spend the same one. A folder beside the file is
 * the lock (mkdir is atomic); a lock older than 30 s is a crashed process's and is taken over.
 */
const withLock = async <T>(file: string, work: () => Promise<T>): Promise<T> => {
  const lock = `${file}.lock`;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt += 1) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > 30_000 || attempt > 150) await rmdir(lock).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
};

/**
 * An access token for the saved login: the saved one while it has a minute left (unless `force`: the API said it
 * expired), else a refresh, saving the rotated refresh token and the new access token.
 */
export const refreshSavedLogin = async (server: string, file: string, force = false): Promise<string> => {
  const usable = (login: SavedLogin | undefined) =>
    !force && login?.access_token && Date.parse(login.access_expires_at ?? '') - Date.now() > 60_000
      ? login.access_token
      : undefined;
  const before = (await readSaved(file)).servers[server];
  if (before === undefined) throw new CliError(EXIT.usage, `not logged in to ${server}: run deployer login`);
  const cached = usable(before);
  if (cached !== undefined) return cached;
  return withLock(file, async () => {
    // Another process may have refreshed while this one waited for the lock.
    const login = (await readSaved(file)).servers[server];
    if (login === undefined) throw new CliError(EXIT.usage, `not logged in to ${server}: run deployer login`);
    if (login.refresh_token !== before.refresh_token && login.access_token) return login.access_token;
    const response = await post(`${server}/api/v1/auth/refresh`, {
      headers: { cookie: `${REFRESH_COOKIE}=${login.refresh_token}` },
    });
    const text = await response.text();
    if (response.status !== 200) {
      const error = refusal(response.status, text);
      if (response.status === 401) {
        await forgetLogin(file, server);
        throw new CliError(
          EXIT.refused,
          `the saved login for ${server} is no longer valid (${error.code}): run deployer login`,
        );
      }
      throw response.status >= 500 ? new UnreachableError(`${server} answered ${response.status}`) : error;
    }
    const session = JSON.parse(text) as { access_token: string; expires_in?: number };
    const rotated = refreshFromCookies(response.headers.getSetCookie()) ?? login.refresh_token;
    await saveLogin(file, server, {
      refresh_token: rotated,
      email: login.email,
      access_token: session.access_token,
      access_expires_at: new Date(Date.now() + (session.expires_in ?? 0) * 1000).toISOString(),
    });
    return session.access_token;
  });
};

/** OAuth 2.0 client credentials (RFC 6749 4.4) at the server's /oauth/token. */
export const clientCredentialsToken = async (server: string, id: string, secret: string): Promise<string> => {
  const response = await post(`${server}/oauth/token`, {
    headers: {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  });
  const text = await response.text();
  if (response.status !== 200) {
    let description = text.slice(0, 200);
    try {
      const parsed = JSON.parse(text) as { error?: string; error_description?: string };
      description = [parsed.error, parsed.error_description].filter(Boolean).join(': ');
    } catch {
      // not JSON
    }
    if (response.status >= 500) throw new UnreachableError(`${server}/oauth/token answered ${response.status}`);
    throw new CliError(EXIT.refused, `the OAuth client credentials were refused (${response.status}): ${description}`);
  }
  return (JSON.parse(text) as { access_token: string }).access_token;
};

export type CredentialKind = 'api-key-file' | 'api-key' | 'client-credentials' | 'login';

/** The token source for this invocation, or a usage error saying how to give one. */
export const resolveCredentials = async (
  server: string,
  env: Env,
  apiKeyFile: string | undefined,
): Promise<TokenSource & { kind: CredentialKind }> => {
  if (apiKeyFile !== undefined) {
    let key: string;
    try {
      key = (await readFile(apiKeyFile, 'utf8')).trim();
    } catch (error) {
      throw new UsageError(`--api-key-file ${apiKeyFile}: ${(error as { code?: string }).code ?? error}`);
    }
    if (key === '') throw new UsageError(`--api-key-file ${apiKeyFile} is empty`);
    return { kind: 'api-key-file', token: async () => key };
  }
  const envKey = env['DEPLOYER_API_KEY']?.trim();
  if (envKey) return { kind: 'api-key', token: async () => envKey };
  const clientId = env['DEPLOYER_CLIENT_ID']?.trim();
  const clientSecret = env['DEPLOYER_CLIENT_SECRET']?.trim();
  if (clientId || clientSecret) {
    if (!clientId || !clientSecret)
      throw new UsageError('DEPLOYER_CLIENT_ID and DEPLOYER_CLIENT_SECRET must be set together');
    return cached('client-credentials', () => clientCredentialsToken(server, clientId, clientSecret));
  }
  const file = credentialsFile(env);
  if ((await readSaved(file)).servers[server] === undefined)
    throw new UsageError(
      `no credentials for ${server}: set DEPLOYER_API_KEY (or --api-key-file), DEPLOYER_CLIENT_ID and DEPLOYER_CLIENT_SECRET, or run deployer login`,
    );
  let current: Promise<string> | undefined;
  return {
    kind: 'login',
    token: () => (current ??= refreshSavedLogin(server, file)),
    renew: async () => (current = refreshSavedLogin(server, file, true)),
  };
};

/** A token fetched once, fetched again when the API says it expired. */
const cached = (kind: CredentialKind, fetchToken: () => Promise<string>): TokenSource & { kind: CredentialKind } => {
  let current: Promise<string> | undefined;
  return {
    kind,
    token: () => (current ??= fetchToken()),
    renew: async () => (current = fetchToken()),
  };
};
