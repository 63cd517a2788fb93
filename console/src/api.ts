// The console's only way to the service: the public API, same origin. The access token lives in memory only (a
// reload signs in again through the refresh cookie the API sets, HttpOnly, on /api/v1/auth); a 401 on any call
// refreshes once and retries; a failed refresh means signed out.

export interface ApiError {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
}

export interface User {
  readonly id: string;
  readonly email: string;
  readonly username?: string;
  readonly display_name?: string | null;
  readonly permissions: readonly string[];
  readonly roles: readonly string[];
}

interface TokenAnswer {
  readonly access_token: string;
  readonly expires_in: number;
  readonly user: User;
}

export type LoginOutcome = { kind: 'signed_in'; user: User } | { kind: 'two_factor'; pendingToken: string };

let accessToken: string | undefined;
let onSignedOut: () => void = () => undefined;

export const setSignedOutHandler = (handler: () => void): void => {
  onSignedOut = handler;
};

const errorOf = async (response: Response): Promise<ApiError> => {
  const body = (await response.json().catch(() => ({}))) as {
    error?: { code?: string; message?: string; details?: unknown };
  };
  return {
    status: response.status,
    code: body.error?.code ?? `HTTP_${response.status}`,
    message: body.error?.message ?? response.statusText,
    details: body.error?.details,
  };
};

export const isApiError = (value: unknown): value is ApiError =>
  typeof value === 'object' && value !== null && 'status' in value && 'code' in value;

/**
 * What to show of a failed call: the API's message, with what its details add (the permissions missing for a 403
 * INSUFFICIENT_PERMISSIONS, the fields of a 400) when the message does not already say it.
 */
export const errorText = (e: unknown): string => {
  if (!isApiError(e)) return 'The service cannot be reached.';
  const details = (e.details ?? {}) as { missing?: unknown; fields?: unknown };
  const extra: string[] = [];
  if (Array.isArray(details.missing) && details.missing.some((m) => !e.message.includes(String(m))))
    extra.push(`Missing: ${details.missing.map(String).join(', ')}.`);
  if (Array.isArray(details.fields))
    for (const f of details.fields as { field?: unknown; message?: unknown }[])
      if (typeof f.message === 'string' && !e.message.includes(f.message))
        extra.push(`${String(f.field ?? '')}: ${f.message}`.replace(/^: /, ''));
  return [e.message, ...extra].join(' ');
};

const send = (method: string, path: string, body?: unknown): Promise<Response> =>
  fetch(`/api/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Uses the refresh cookie for a new access token; the user when it worked. */
export const refresh = async (): Promise<User | undefined> => {
  const response = await fetch('/api/v1/auth/refresh', { method: 'POST', credentials: 'same-origin' });
  if (!response.ok) {
    accessToken = undefined;
    return undefined;
  }
  const answer = (await response.json()) as TokenAnswer;
  accessToken = answer.access_token;
  return answer.user;
};

/** One API call: the parsed JSON answer, or an ApiError thrown. */
export const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  let response = await send(method, path, body);
  if (response.status === 401 && accessToken !== undefined) {
    if ((await refresh()) === undefined) {
      onSignedOut();
      throw await errorOf(response);
    }
    response = await send(method, path, body);
  }
  if (!response.ok) throw await errorOf(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
};

export const login = async (email: string, password: string): Promise<LoginOutcome> => {
  const answer = await api<TokenAnswer | { requires_2fa: true; pending_token: string }>('POST', '/auth/login', {
    email,
    password,
  });
  if ('requires_2fa' in answer) return { kind: 'two_factor', pendingToken: answer.pending_token };
  accessToken = answer.access_token;
  return { kind: 'signed_in', user: answer.user };
};

export const verifyTwoFactor = async (pendingToken: string, code: string): Promise<User> => {
  const answer = await api<TokenAnswer>('POST', '/auth/2fa/verify', { pending_token: pendingToken, code });
  accessToken = answer.access_token;
  return answer.user;
};

/** Sign out of this browser only: its refresh token is revoked and its access token forgotten; other sessions stay. */
export const logout = async (): Promise<void> => {
  accessToken = undefined;
  await api('DELETE', '/auth/session').catch(() => undefined);
};

/** As `logout`, with the API's refusal thrown (for a page to show). */
export const logoutHere = async (): Promise<void> => {
  await api('DELETE', '/auth/session');
  accessToken = undefined;
};

/** Logout with the API's refusal thrown (for a page to show); signed out here only once the API has done it. */
export const logoutEverywhere = async (): Promise<void> => {
  await api('POST', '/auth/logout');
  accessToken = undefined;
};

/** A new password: the API ends every other session and answers a new one for this page, which it keeps. */
export const changePassword = async (currentPassword: string, newPassword: string): Promise<User> => {
  const answer = await api<TokenAnswer>('POST', '/auth/password', {
    current_password: currentPassword,
    new_password: newPassword,
  });
  accessToken = answer.access_token;
  return answer.user;
};
