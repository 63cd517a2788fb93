// A few calls of a client generated from the OpenAPI document (openapi-typescript types, openapi-fetch client).
// Never run: tests/integration/service/openapi-client.test.ts type-checks it against freshly generated types, so
// a document that stops describing these answers, bodies or parameters fails that test.
// (Not in tsconfig.json's program: its import exists only once `npm run openapi:types` wrote it.)
import createClient from 'openapi-fetch';
import type { components, paths } from '../generated/api.js';

const client = createClient<paths>({ baseUrl: 'http://localhost:3000' });

/** Login: a session or a two-factor challenge; the error envelope on 401. */
export const login = async (email: string, password: string): Promise<string | undefined> => {
  const { data, error } = await client.POST('/api/v1/auth/login', { body: { email, password } });
  if (error !== undefined) {
    // The general rate limit answers plain text (a string); every other error is the envelope.
    if (typeof error === 'string') throw new Error(error);
    const code: string = error.error.code;
    throw new Error(code);
  }
  if ('requires_2fa' in data) {
    const pending: string = data.pending_token;
    return pending;
  }
  const expires: number = data.expires_in;
  const roles: string[] = data.user.roles;
  return `${data.access_token}:${expires}:${roles.join(',')}`;
};

/** The deployment list: typed query (integers, enums) and the {data, meta, status_counts} envelope. */
export const firstDeploymentState = async (token: string): Promise<string | undefined> => {
  const { data } = await client.GET('/api/v1/deployments', {
    params: { query: { page: 1, limit: 20, status: 'running', source_type: 'action' } },
    headers: { authorization: `Bearer ${token}` },
  });
  if (data === undefined) return undefined;
  const pages: number = data.meta.total_pages;
  const running: number = data.status_counts.running;
  const state: string | undefined = data.data[0]?.state;
  return `${state}:${pages}:${running}`;
};

/** Create a deployment: the body's fields and the three answers (dry run, started, queued). */
export const deploy = async (token: string, actionId: string): Promise<string> => {
  const { data, error, response } = await client.POST('/api/v1/deployments', {
    body: {
      action_id: actionId,
      target_tags: [{ key: 'env', value: 'prod' }],
      target_mode: { rolling: { batch_size: 2 } },
      failure_strategy: 'continue_on_failure',
      variables: { PORT: 8080, NAME: 'web', DEBUG: false },
      priority: 10,
    },
    headers: { authorization: `Bearer ${token}` },
  });
  if (error !== undefined)
    return typeof error === 'string' ? error : `${response.status} ${error.error.code} ${error.error.message}`;
  if ('dry_run' in data) return `dry run of ${data.plan.target_count} targets`;
  if (data.pending) return data.pending_request_id;
  const steps: number = data.deployment.total_steps;
  return `${data.deployment_id} (${steps} steps)`;
};

/** Pending requests (a bare array) and the log history (offset/limit integers). */
export const queueAndHistory = async (token: string, id: string): Promise<number> => {
  const headers = { authorization: `Bearer ${token}` };
  const pending = await client.GET('/api/v1/deployments/pending', {
    params: { query: { status: 'pending' } },
    headers,
  });
  const position: number | undefined = pending.data?.[0]?.queue_position;
  const history = await client.GET('/api/v1/deployments/{id}/logs/history', {
    params: { path: { id }, query: { offset: 0, limit: 100 } },
    headers,
  });
  const kinds: string[] = (history.data ?? []).map((entry) => entry.event_type);
  const cancelled = await client.POST('/api/v1/deployments/{id}/cancel', {
    params: { path: { id } },
    body: { reason: 'done' },
    headers,
  });
  const state: string | undefined = cancelled.data?.state;
  return (position ?? 0) + kinds.length + (state === undefined ? 0 : 1);
};

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
